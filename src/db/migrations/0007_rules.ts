import { type Kysely, PostgresAdapter, sql } from 'kysely';

// A bundle's configuration rules (docs/configuration.md), their selectors JSON text naming options by id and products
// by CRM product id, as the API shows them. Rules make up quotes and configure answers, so they move the bundle's
// tree_version (migration 0004): no cache can serve rules that changed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bundle_rules')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('bundle_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('requires', 'excludes')`))
    .addColumn('when_json', 'text', (c) => c.notNull())
    .addColumn('then_json', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('display_order', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bundle_rules_pk', ['account_id', 'id'])
    .addForeignKeyConstraint(
      'bundle_rules_bundle_fk',
      ['account_id', 'bundle_id'],
      'bundles',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('bundle_rules_bundle_idx')
    .on('bundle_rules')
    .columns(['account_id', 'bundle_id', 'display_order', 'id'])
    .execute();

  const operations = ['insert', 'update', 'delete'] as const;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // A statement trigger over the transition table, as 0004 does: one bump per bundle per statement.
    await sql
      .raw(
        `create function cpq_bump_tree_version_rules() returns trigger language plpgsql as $$ begin
          update bundles b set tree_version = b.tree_version + 1
            from (select distinct account_id, bundle_id from changed) c
            where b.account_id = c.account_id and b.id = c.bundle_id;
          return null;
        end $$`,
      )
      .execute(db);
    const transitionTables = {
      insert: 'new table as changed',
      update: 'new table as changed',
      delete: 'old table as changed',
    };
    for (const operation of operations) {
      await sql
        .raw(
          `create trigger bundle_rules_tree_${operation} after ${operation} on bundle_rules ` +
            `referencing ${transitionTables[operation]} for each statement execute function cpq_bump_tree_version_rules()`,
        )
        .execute(db);
    }
  } else {
    for (const operation of operations) {
      const row = operation === 'delete' ? 'OLD' : 'NEW';
      await sql
        .raw(
          `create trigger bundle_rules_tree_${operation} after ${operation} on bundle_rules for each row begin ` +
            'update bundles set tree_version = tree_version + 1 ' +
            `where account_id = ${row}.account_id and id = ${row}.bundle_id; end`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('bundle_rules').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql.raw('drop function cpq_bump_tree_version_rules()').execute(db);
  }
}
