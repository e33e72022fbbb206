import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { operations, postgresTreeFunction, sqliteTreeTrigger } from './0004_tree_versions.ts';

// bundles.included_options_count and add_on_options_count, which the list form shows: counted for each row of a page,
// they were half of what a page cost the database. 0004's triggers move them with the bundle's versions, in the
// writing statement, so no write path leaves them behind and a bundle row is still updated once.

async function keepCounts(db: Kysely<unknown>, optionCounts: boolean): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql.raw(postgresTreeFunction(optionCounts)).execute(db);
    return;
  }
  for (const operation of operations) {
    await sql.raw(`drop trigger bundle_options_tree_${operation}`).execute(db);
    await sql.raw(sqliteTreeTrigger('bundle_options', operation, optionCounts)).execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['included_options_count', 'add_on_options_count']) {
    await db.schema
      .alterTable('bundles')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await sql`update bundles set
    included_options_count = (select count(*) from bundle_options o
      where o.account_id = bundles.account_id and o.bundle_id = bundles.id and o.type = 'INCLUDED'),
    add_on_options_count = (select count(*) from bundle_options o
      where o.account_id = bundles.account_id and o.bundle_id = bundles.id and o.type = 'ADD_ON')`.execute(
    db,
  );
  await keepCounts(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await keepCounts(db, false);
  for (const column of ['included_options_count', 'add_on_options_count']) {
    await db.schema.alterTable('bundles').dropColumn(column).execute();
  }
}
