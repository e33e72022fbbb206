import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { searchTextOf } from '../search-text.ts';

// Option products keep the lower-cased text `q` is matched against (src/db/search-text.ts), filled here for stored
// rows. PostgreSQL indexes it by trigrams where pg_trgm and btree_gin can be created, and goes on without the index
// (searches as correct, reading the book) where not. docs/decisions/priced-product-search.md says why.
export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds a NOT NULL column only with a default; every insert gives the column its value.
  await db.schema
    .alterTable('option_products')
    .addColumn('search_text', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  const stored = db as unknown as Kysely<{
    option_products: {
      account_id: string;
      id: string;
      product_id: string;
      properties: string;
      search_text: string;
    };
  }>;
  let after = { account: '', id: '' };
  for (;;) {
    const rows = await stored
      .selectFrom('option_products')
      .select(['account_id', 'id', 'product_id', 'properties'])
      .where((eb) =>
        eb.or([
          eb('account_id', '>', after.account),
          eb.and([eb('account_id', '=', after.account), eb('id', '>', after.id)]),
        ]),
      )
      .orderBy('account_id')
      .orderBy('id')
      .limit(1000)
      .execute();
    for (const row of rows) {
      await stored
        .updateTable('option_products')
        .set({ search_text: searchTextOf(row.product_id, row.properties) })
        .where('account_id', '=', row.account_id)
        .where('id', '=', row.id)
        .execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < 1000) break;
    after = { account: last.account_id, id: last.id };
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    if (await trigramsAvailable(db)) {
      // account_id leads, as in every index of a tenant's table; btree_gin lets a GIN index hold it.
      await sql`create index option_products_search_trgm on option_products
        using gin (account_id, search_text gin_trgm_ops)`.execute(db);
    }
    // The planner weighs the trigram index by the column's statistics: without them it may read the index for a
    // word half the account holds rather than a small book's entries, until autovacuum comes round.
    await sql`analyze option_products`.execute(db);
  }
}

/** Creates pg_trgm and btree_gin if they are not there yet; false when this role cannot. A savepoint keeps the
 * migration's transaction usable after a refusal. */
async function trigramsAvailable(db: Kysely<unknown>): Promise<boolean> {
  await sql`savepoint trigrams`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create extension if not exists btree_gin`.execute(db);
    await sql`release savepoint trigrams`.execute(db);
    return true;
  } catch {
    await sql`rollback to savepoint trigrams`.execute(db);
    return false;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The extensions stay: other schemas of the database may use them.
  await sql`drop index if exists option_products_search_trgm`.execute(db);
  await db.schema.alterTable('option_products').dropColumn('search_text').execute();
}
