import { PostgresAdapter, type Selectable, type Updateable } from 'kysely';
import type { BundlesTable, Executor } from '../db/database.ts';
import { shapedStatement } from '../db/shaped-statements.ts';
import type { Bundle } from './bundles.schemas.ts';

export type BundleRow = Selectable<BundlesTable>;

/** `columns`, which must name every column of the bundles table: one added to the table fails the type check. */
function everyColumn<const C extends readonly (keyof BundlesTable)[]>(
  columns: [Exclude<keyof BundlesTable, C[number]>] extends [never] ? C : never,
): C {
  return columns;
}

/**
 * Every column of a bundle's row, named: a list statement's text then says each column it returns, which
 * src/db/sqlite-driver.ts would otherwise ask SQLite for after every run of a `*`.
 */
const bundleColumns = everyColumn([
  'account_id',
  'id',
  'is_active',
  'header_product_id',
  'header_properties',
  'cloned_bundle_temp_name',
  'version',
  'tree_version',
  'catalogue_key',
  'included_options_count',
  'add_on_options_count',
  'created_at',
  'updated_at',
]);

/** The list form of a bundle; its option counts are columns of the row, kept by triggers (migration 0012). */
export function toBundle(row: BundleRow): Bundle {
  return {
    id: row.id,
    accountId: row.account_id,
    isActive: Boolean(row.is_active),
    includedOptionsCount: Number(row.included_options_count),
    addOnOptionsCount: Number(row.add_on_options_count),
    header: { productId: row.header_product_id, properties: JSON.parse(row.header_properties) },
    clonedBundleTempName: row.cloned_bundle_temp_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findBundle(
  db: Executor,
  accountId: string,
  id: string,
): Promise<BundleRow | undefined> {
  return db
    .selectFrom('bundles')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function insertBundle(db: Executor, row: BundleRow): Promise<void> {
  await db.insertInto('bundles').values(row).execute();
}

/** Changes fields of a bundle whose version lockRoot has already moved on. */
export async function updateBundle(
  db: Executor,
  accountId: string,
  id: string,
  changes: Updateable<BundlesTable>,
): Promise<void> {
  await db
    .updateTable('bundles')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Deletes the bundle; the foreign key cascades take its options, products, price books and entries along. */
export async function deleteBundle(db: Executor, accountId: string, id: string): Promise<void> {
  await db.deleteFrom('bundles').where('account_id', '=', accountId).where('id', '=', id).execute();
}

export interface PageRequest {
  afterId: string | null;
  isActive: boolean | undefined;
  /** Only bundles whose header is this CRM product. */
  productId: string | undefined;
  limit: number;
}

/**
 * One page of bundles after `afterId`, in id order. The predicate and order match the primary key
 * (account_id, id) or, filtered, the index (account_id, is_active, id) or (account_id, header_product_id, id), so
 * every page is one index range scan with no sort. Exported unexecuted so the plan can be checked.
 */
export function bundlePageQuery(db: Executor, accountId: string, page: PageRequest) {
  // The option counts are columns of the row, kept by triggers (migration 0012): a page reads no other table.
  let query = db.selectFrom('bundles').select(bundleColumns).where('account_id', '=', accountId);
  if (page.productId !== undefined) query = query.where('header_product_id', '=', page.productId);
  if (page.isActive !== undefined) query = query.where('is_active', '=', page.isActive);
  if (page.afterId !== null) query = query.where('id', '>', page.afterId);
  return query.orderBy('id').limit(page.limit);
}

interface PageValues extends Record<string, unknown> {
  accountId: string;
  keyId: string;
  afterId: string | null;
  isActive: boolean | undefined;
  productId: string | undefined;
  limit: number;
}

/**
 * The page, from the key's row, so the statement says whether the key is live, on an empty page too. PostgreSQL joins
 * the page as a subquery, whose plan stops at the limit; SQLite would copy that subquery into a table first, so it
 * joins the bundles, read in id order and stopped at the limit. Exported unexecuted so its plan can be checked.
 */
export const pageWithKey = shapedStatement(
  (values: PageValues) => ({
    after: values.afterId !== null,
    isActive: values.isActive !== undefined,
    productId: values.productId !== undefined,
  }),
  (db, slot, shape) => {
    const page = {
      afterId: shape.after ? slot.afterId : null,
      isActive: shape.isActive ? slot.isActive : undefined,
      productId: shape.productId ? slot.productId : undefined,
      limit: slot.limit,
    };
    const keyRow = db
      .selectFrom('api_keys as k')
      .where('k.account_id', '=', slot.accountId)
      .where('k.id', '=', slot.keyId);
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      return keyRow
        .leftJoin(bundlePageQuery(db, slot.accountId, page).as('b'), (join) => join.onTrue())
        .select('k.revoked_at')
        .selectAll('b')
        .orderBy('b.id');
    }
    return keyRow
      .leftJoin('bundles as b', (join) => {
        let on = join.onRef('b.account_id', '=', 'k.account_id');
        if (page.productId !== undefined) on = on.on('b.header_product_id', '=', page.productId);
        if (page.isActive !== undefined) on = on.on('b.is_active', '=', page.isActive);
        if (page.afterId !== null) on = on.on('b.id', '>', page.afterId);
        return on;
      })
      .select('k.revoked_at')
      .select(bundleColumns.map((column) => `b.${column}` as const))
      .orderBy('b.id')
      .limit(page.limit);
  },
);

/**
 * A page of bundles (the rows bundlePageQuery reads), and whether the account's key `keyId` is still live, in one
 * statement (pageWithKey).
 */
export async function listBundlesAfter(
  db: Executor,
  accountId: string,
  keyId: string,
  page: PageRequest,
): Promise<{ keyLive: boolean; rows: BundleRow[] }> {
  // One plan suits every page: a range of an index in id order, up to the limit.
  const { rows } = await db.executeQuery(pageWithKey(db, { accountId, keyId, ...page }, { prepared: true }));
  const [first] = rows;
  return {
    keyLive: first !== undefined && first.revoked_at === null,
    rows: rows.flatMap(({ revoked_at, ...row }) => (row.id === null ? [] : [row as BundleRow])),
  };
}
