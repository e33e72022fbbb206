import { type Kysely, PostgresAdapter, sql } from 'kysely';

// bundles.tree_version moves whenever anything a bundle's details are made of changes (options, products, books,
// entries, prices, variant tables), kept by the database in the changing transaction so no write path can forget it;
// bundles.version moves too when the option counts its list form shows change.

/** How a row of each table reaches its bundle: it names it, or it names its option, or its price book. */
const tables = {
  bundle_options: { via: 'bundle', column: 'bundle_id' },
  option_products: { via: 'bundle', column: 'bundle_id' },
  price_books: { via: 'option', column: 'bundle_option_id' },
  price_book_products: { via: 'option', column: 'option_id' },
  price_book_prices: { via: 'book', column: 'price_book_id' },
  product_variants: { via: 'book', column: 'price_book_id' },
} as const;

type Table = keyof typeof tables;
const tableNames = Object.keys(tables) as Table[];
export const operations = ['insert', 'update', 'delete'] as const;

/**
 * The bundle id of row `row` (NEW, OLD, or an alias) of the table: its own column, or a primary-key lookup of its
 * option, or of its price book and that book's option. A lookup per row (or per distinct parent) stays an index
 * probe whatever the planner knows of the tables; a join can make it scan them on every statement.
 */
function bundleOf(table: Table, row: string): string {
  const { via, column } = tables[table];
  if (via === 'bundle') return `${row}.${column}`;
  if (via === 'option') {
    return `(select o.bundle_id from bundle_options o where o.account_id = ${row}.account_id and o.id = ${row}.${column})`;
  }
  return (
    '(select o.bundle_id from price_books k join bundle_options o on o.account_id = k.account_id and ' +
    `o.id = k.bundle_option_id where k.account_id = ${row}.account_id and k.id = ${row}.${column})`
  );
}

/**
 * SQLite's trigger of `table` for `operation`. With `optionCounts` (migration 0012), a bundle_options trigger also
 * moves the bundle's counts of options by type, in the same statement.
 */
export function sqliteTreeTrigger(
  table: Table,
  operation: (typeof operations)[number],
  optionCounts = false,
): string {
  const row = operation === 'delete' ? 'OLD' : 'NEW';
  const counts = table !== 'bundle_options' ? '0' : operation === 'update' ? '(NEW.type <> OLD.type)' : '1';
  const typed = (type: string) => {
    if (operation === 'insert') return `(NEW.type = '${type}')`;
    if (operation === 'delete') return `-(OLD.type = '${type}')`;
    return `(NEW.type = '${type}') - (OLD.type = '${type}')`;
  };
  const moved =
    optionCounts && table === 'bundle_options'
      ? `, included_options_count = included_options_count + ${typed('INCLUDED')}, ` +
        `add_on_options_count = add_on_options_count + ${typed('ADD_ON')}`
      : '';
  return (
    `create trigger ${table}_tree_${operation} after ${operation} on ${table} for each row begin ` +
    `update bundles set tree_version = tree_version + 1, version = version + ${counts}${moved} ` +
    `where account_id = ${row}.account_id and id = ${bundleOf(table, row)}; end`
  );
}

// SQLite has row triggers only: one per table and operation, finding the row's bundle with a subquery.
async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const table of tableNames) {
    for (const operation of operations) {
      await sql.raw(sqliteTreeTrigger(table, operation)).execute(db);
    }
  }
  // A bundle's own change, unless the statement is one of the above (recursive triggers are off, and the guard
  // keeps it so if they are turned on).
  await sql
    .raw(
      'create trigger bundles_tree_update after update on bundles for each row ' +
        'when NEW.tree_version = OLD.tree_version begin ' +
        'update bundles set tree_version = tree_version + 1 where account_id = NEW.account_id and id = NEW.id; end',
    )
    .execute(db);
}

/**
 * The function every PostgreSQL statement trigger of a bundle's tree runs, over its transition tables, so a statement
 * writing many rows of a bundle moves it once. With `optionCounts` (migration 0012), it also moves the option counts.
 */
export function postgresTreeFunction(optionCounts = false): string {
  const bump = (counts: string, from: string, moved = '') =>
    `update bundles b set tree_version = b.tree_version + 1, version = b.version + ${counts}${moved} from (${from}) c ` +
    'where b.account_id = c.account_id and b.id = c.bundle_id;';
  const typed = (type: string, row: string) => `sum(case when ${row}.type = '${type}' then 1 else 0 end)`;
  const movedCounts =
    ', included_options_count = b.included_options_count + c.included, ' +
    'add_on_options_count = b.add_on_options_count + c.add_on';
  const retyped =
    'select r.account_id, r.bundle_id, max(case when r.type <> p.type then 1 else 0 end) as retyped' +
    (optionCounts
      ? `, ${typed('INCLUDED', 'r')} - ${typed('INCLUDED', 'p')} as included, ` +
        `${typed('ADD_ON', 'r')} - ${typed('ADD_ON', 'p')} as add_on`
      : '') +
    ' from changed r join before p on p.account_id = r.account_id and p.id = r.id group by r.account_id, r.bundle_id';
  const counted = (sign: '' | '-') =>
    `select r.account_id, r.bundle_id, ${sign}${typed('INCLUDED', 'r')} as included, ` +
    `${sign}${typed('ADD_ON', 'r')} as add_on from changed r group by r.account_id, r.bundle_id`;
  const branches = tableNames.flatMap((table): [string, string][] => {
    const parents = `select distinct account_id, ${tables[table].column} from changed`;
    const bundles = `select distinct r.account_id, ${bundleOf(table, 'r')} as bundle_id from (${parents}) r`;
    const when = `TG_TABLE_NAME = '${table}'`;
    if (table !== 'bundle_options') return [[when, bump('0', bundles)]];
    if (!optionCounts) {
      return [
        [`${when} and TG_OP = 'UPDATE'`, bump('c.retyped', retyped)],
        [when, bump('1', bundles)],
      ];
    }
    return [
      [`${when} and TG_OP = 'UPDATE'`, bump('c.retyped', retyped, movedCounts)],
      [`${when} and TG_OP = 'INSERT'`, bump('1', counted(''), movedCounts)],
      [when, bump('1', counted('-'), movedCounts)],
    ];
  });
  const chain = branches.map(([when, then], i) => `${i === 0 ? 'if' : 'elsif'} ${when} then ${then}`);
  // One function for every table: plpgsql plans each statement when first run, so a branch only ever meets the
  // transition tables of its own table and operation.
  return `create or replace function cpq_bump_tree_version() returns trigger language plpgsql as $$ begin
        if TG_TABLE_NAME = 'bundles' then
          if NEW.tree_version = OLD.tree_version then NEW.tree_version := OLD.tree_version + 1; end if;
          return NEW;
        end if;
        ${chain.join('\n        ')}
        end if;
        return null;
      end $$`;
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql.raw(postgresTreeFunction()).execute(db);
  await sql
    .raw(
      'create trigger bundles_tree before update on bundles for each row execute function cpq_bump_tree_version()',
    )
    .execute(db);
  const transitionTables = {
    insert: 'new table as changed',
    update: 'old table as before new table as changed',
    delete: 'old table as changed',
  };
  for (const table of tableNames) {
    for (const operation of operations) {
      await sql
        .raw(
          `create trigger ${table}_tree_${operation} after ${operation} on ${table} ` +
            `referencing ${transitionTables[operation]} for each statement execute function cpq_bump_tree_version()`,
        )
        .execute(db);
    }
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('bundles')
    .addColumn('tree_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const table of tableNames) {
    for (const operation of operations) {
      await sql.raw(`drop trigger ${table}_tree_${operation}${postgres ? ` on ${table}` : ''}`).execute(db);
    }
  }
  if (postgres) {
    await sql.raw('drop trigger bundles_tree on bundles').execute(db);
    await sql.raw('drop function cpq_bump_tree_version()').execute(db);
  } else {
    await sql.raw('drop trigger bundles_tree_update').execute(db);
  }
  await db.schema.alterTable('bundles').dropColumn('tree_version').execute();
}
