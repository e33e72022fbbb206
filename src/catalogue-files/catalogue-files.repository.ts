import { PostgresAdapter, type Selectable, sql } from 'kysely';
import type { BundleOptionsTable, BundlesTable, Db, Executor } from '../db/database.ts';

/** Every bundle of the account with what its key is made of and its tree_version, in id order. */
export async function listBundleKeyRows(
  db: Executor,
  accountId: string,
): Promise<{ id: string; catalogue_key: string | null; header_product_id: string; tree_version: number }[]> {
  return db
    .selectFrom('bundles')
    .select(['id', 'catalogue_key', 'header_product_id', 'tree_version'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

/** The bundles, whole rows, in id order. */
export async function listBundlesByIds(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<Selectable<BundlesTable>[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('bundles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

const lockChunk = 1000;

/**
 * Locks each bundle row an apply may touch, before it reads them, without moving its tree_version (an unchanged one
 * stays as it was). Ids in order, so two applies queue rather than deadlock; SQLite, one writer at a time, needs none.
 */
export async function lockBundles(tx: Executor, accountId: string, ids: readonly string[]): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  const sorted = [...ids].sort();
  for (let start = 0; start < sorted.length; start += lockChunk) {
    await tx
      .selectFrom('bundles')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', 'in', sorted.slice(start, start + lockChunk))
      .orderBy('id')
      .forUpdate()
      .execute();
  }
}

/** The options of several bundles, by bundle, then display order, then id. */
export async function listOptionsOfBundles(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
): Promise<Selectable<BundleOptionsTable>[]> {
  if (bundleIds.length === 0) return [];
  return db
    .selectFrom('bundle_options')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', bundleIds)
    .orderBy('bundle_id')
    .orderBy('display_order')
    .orderBy('id')
    .execute();
}

/** Removes a product's prices in the currencies given, leaving its entry and its other currencies. */
export async function deletePriceRows(
  tx: Executor,
  accountId: string,
  priceBookId: string,
  productId: string,
  currencies: readonly string[],
): Promise<void> {
  if (currencies.length === 0) return;
  await tx
    .deleteFrom('price_book_prices')
    .where('account_id', '=', accountId)
    .where('price_book_id', '=', priceBookId)
    .where('product_id', '=', productId)
    .where('currency', 'in', currencies)
    .execute();
}

export async function deleteVariantsRow(
  tx: Executor,
  accountId: string,
  priceBookId: string,
  productId: string,
): Promise<void> {
  await tx
    .deleteFrom('product_variants')
    .where('account_id', '=', accountId)
    .where('price_book_id', '=', priceBookId)
    .where('product_id', '=', productId)
    .execute();
}

/** How far the rows written may outgrow what a table's statistics count before they are taken again. */
const STALE_FACTOR = 4;

/**
 * PostgreSQL: fresh statistics, in the transaction, for tables whose statistics count under a quarter of the rows
 * it wrote, since foreign-key and trigger plans made for "empty" tables walk whole indexes per row as an apply
 * grows. Only such tables, as ANALYZE locks against another ANALYZE. Figures: bench/HISTORY.md.
 */
export async function refreshSmallStatistics(
  tx: Executor,
  written: ReadonlyMap<string, number>,
): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter) || written.size === 0) return;
  const known = await tx
    .selectFrom(sql<{ relname: string; reltuples: number }>`pg_class`.as('c'))
    .select(['c.relname', 'c.reltuples'])
    .where('c.relname', 'in', [...written.keys()])
    .where(sql<boolean>`c.relnamespace = current_schema()::regnamespace`)
    .execute();
  const stale = known.filter((row) => row.reltuples * STALE_FACTOR < (written.get(row.relname) ?? 0));
  if (stale.length === 0) return;
  await sql`analyze ${sql.join(stale.map((row) => sql.table(row.relname)))}`.execute(tx);
}

/** Whether the database runs one write transaction at a time (SQLite), so that a long one holds up every account. */
export function oneWriterAtATime(db: Executor): boolean {
  return !(db.getExecutor().adapter instanceof PostgresAdapter);
}

/**
 * SQLite: runs `write` in a transaction with foreign keys off, so an apply can stage a new bundle's rows before its
 * own row exists; nothing reads them until then, since every read of them starts from their bundle.
 */
export async function withoutForeignKeys<T>(db: Db, write: (tx: Executor) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`pragma foreign_keys = off`.execute(connection);
    try {
      return await connection.transaction().execute(write);
    } finally {
      await sql`pragma foreign_keys = on`.execute(connection);
    }
  });
}

/** Deletes what was staged for bundles never written: their options (with all they hold) and rules. */
export async function deleteStagedBundles(tx: Executor, accountId: string, bundleIds: readonly string[]) {
  if (bundleIds.length === 0) return;
  for (const table of ['bundle_rules', 'bundle_options'] as const) {
    await tx
      .deleteFrom(table)
      .where('account_id', '=', accountId)
      .where('bundle_id', 'in', bundleIds)
      .execute();
  }
}

/** Bundles of the account with options or rules staged before `before` but no row: an apply died staging them. */
export async function listStaleStagedBundles(
  db: Executor,
  accountId: string,
  before: string,
): Promise<string[]> {
  const orphans = (table: string) => sql`select c.bundle_id from ${sql.table(table)} c
    where c.account_id = ${accountId} and c.created_at < ${before}
    and not exists (select 1 from bundles b where b.account_id = c.account_id and b.id = c.bundle_id)`;
  const { rows } = await sql<{
    bundle_id: string;
  }>`${orphans('bundle_options')} union ${orphans('bundle_rules')}`.execute(db);
  return rows.map((row) => row.bundle_id);
}
