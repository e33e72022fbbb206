import { type Kysely, PostgresAdapter, sql } from 'kysely';

// bundles.tree_version changes whenever anything a bundle's details are made of changes: the bundle itself, its
// options and their products, their price books, entries, prices and variant tables. A cache of details is
// checked against it, so it is kept by the database itself, in the same transaction as the change: no write
// path, present or future, can forget it. bundles.version changes too when the option counts its list form
// shows change (an option made, deleted, or of another type).

/** How a row of each table finds its bundle; `r` is NEW or OLD. */
const bundleOf: Record<string, (r: string) => string> = {
  bundle_options: (r) => `${r}.bundle_id`,
  option_products: (r) => `${r}.bundle_id`,
  price_books: (r) =>
    `(select o.bundle_id from bundle_options o where o.account_id = ${r}.account_id and o.id = ${r}.bundle_option_id)`,
  price_book_products: (r) =>
    `(select o.bundle_id from bundle_options o where o.account_id = ${r}.account_id and o.id = ${r}.option_id)`,
  price_book_prices: (r) => bookBundle(r),
  product_variants: (r) => bookBundle(r),
};

function bookBundle(r: string): string {
  return (
    '(select o.bundle_id from price_books b join bundle_options o on o.account_id = b.account_id and ' +
    `o.id = b.bundle_option_id where b.account_id = ${r}.account_id and b.id = ${r}.price_book_id)`
  );
}

const operations = [
  { name: 'insert', row: 'NEW' },
  { name: 'update', row: 'NEW' },
  { name: 'delete', row: 'OLD' },
] as const;

/** The bundle's version moves with its option counts: an option made or deleted, or its type changed. */
function countsChange(table: string, operation: 'insert' | 'update' | 'delete', dialect: 'sqlite' | 'pg') {
  if (table !== 'bundle_options') return '0';
  if (operation !== 'update') return '1';
  return dialect === 'sqlite' ? '(NEW.type <> OLD.type)' : 'case when NEW.type <> OLD.type then 1 else 0 end';
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const [table, bundle] of Object.entries(bundleOf)) {
    for (const { name, row } of operations) {
      await sql
        .raw(
          `create trigger ${table}_tree_${name} after ${name} on ${table} for each row begin ` +
            `update bundles set tree_version = tree_version + 1, ` +
            `version = version + ${countsChange(table, name, 'sqlite')} ` +
            `where account_id = ${row}.account_id and id = ${bundle(row)}; end`,
        )
        .execute(db);
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

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  const branch = (table: string, name: 'insert' | 'update' | 'delete', row: string) =>
    `if TG_TABLE_NAME = '${table}' and TG_OP = '${name.toUpperCase()}' then ` +
    `update bundles set tree_version = tree_version + 1, version = version + ${countsChange(table, name, 'pg')} ` +
    `where account_id = ${row}.account_id and id = ${bundleOf[table]?.(row)}; return null; end if;`;
  const branches = Object.keys(bundleOf).flatMap((table) =>
    operations.map(({ name, row }) => branch(table, name, row)),
  );
  // One function for every table: plpgsql plans it per table, so each branch only ever sees its own row type.
  await sql
    .raw(
      `create function cpq_bump_tree_version() returns trigger language plpgsql as $$ begin
        if TG_TABLE_NAME = 'bundles' then
          if NEW.tree_version = OLD.tree_version then NEW.tree_version := OLD.tree_version + 1; end if;
          return NEW;
        end if;
        ${branches.join('\n        ')}
        return null;
      end $$`,
    )
    .execute(db);
  await sql
    .raw(
      'create trigger bundles_tree before update on bundles for each row execute function cpq_bump_tree_version()',
    )
    .execute(db);
  for (const table of Object.keys(bundleOf)) {
    await sql
      .raw(
        `create trigger ${table}_tree after insert or update or delete on ${table} ` +
          'for each row execute function cpq_bump_tree_version()',
      )
      .execute(db);
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
  for (const table of Object.keys(bundleOf)) {
    if (postgres) await sql.raw(`drop trigger ${table}_tree on ${table}`).execute(db);
    else for (const { name } of operations) await sql.raw(`drop trigger ${table}_tree_${name}`).execute(db);
  }
  if (postgres) {
    await sql.raw('drop trigger bundles_tree on bundles').execute(db);
    await sql.raw('drop function cpq_bump_tree_version()').execute(db);
  } else {
    await sql.raw('drop trigger bundles_tree_update').execute(db);
  }
  await db.schema.alterTable('bundles').dropColumn('tree_version').execute();
}
