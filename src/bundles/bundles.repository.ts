import type { Selectable, Updateable } from 'kysely';
import type { BundlesTable, Executor } from '../db/database.ts';
import { shapedStatement } from '../db/shaped-statements.ts';
import type { Bundle } from './bundles.schemas.ts';

export type BundleRow = Selectable<BundlesTable>;

export interface OptionCounts {
  included: number;
  addOn: number;
}

const noOptions: OptionCounts = { included: 0, addOn: 0 };

export function toBundle(row: BundleRow, counts: OptionCounts = noOptions): Bundle {
  return {
    id: row.id,
    accountId: row.account_id,
    isActive: Boolean(row.is_active),
    includedOptionsCount: counts.included,
    addOnOptionsCount: counts.addOn,
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

/** Option counts of several bundles in one grouped query; a bundle without options is absent from the map. */
export async function countOptions(
  db: Executor,
  accountId: string,
  bundleIds: string[],
): Promise<Map<string, OptionCounts>> {
  const counts = new Map<string, OptionCounts>();
  if (bundleIds.length === 0) return counts;
  const rows = await db
    .selectFrom('bundle_options')
    .select((eb) => ['bundle_id', 'type', eb.fn.countAll().as('n')])
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', bundleIds)
    .groupBy(['bundle_id', 'type'])
    .execute();
  for (const row of rows) {
    const entry = counts.get(row.bundle_id) ?? { included: 0, addOn: 0 };
    if (row.type === 'INCLUDED') entry.included = Number(row.n);
    else entry.addOn = Number(row.n);
    counts.set(row.bundle_id, entry);
  }
  return counts;
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
  // The option counts of each row, read in the same statement: a page is one statement, so it sees one state
  // with no transaction around it.
  let query = db
    .selectFrom('bundles')
    .selectAll()
    .select((eb) => {
      const optionsOfType = (type: 'INCLUDED' | 'ADD_ON') =>
        eb
          .selectFrom('bundle_options as o')
          .select((counted) => counted.fn.countAll<number>().as('n'))
          .whereRef('o.account_id', '=', 'bundles.account_id')
          .whereRef('o.bundle_id', '=', 'bundles.id')
          .where('o.type', '=', type);
      return [optionsOfType('INCLUDED').as('included_options'), optionsOfType('ADD_ON').as('add_on_options')];
    })
    .where('account_id', '=', accountId);
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

/** The page, from the key's row: the statement also says whether the key is still live, on an empty page too. */
const pageWithKey = shapedStatement(
  (values: PageValues) => ({
    after: values.afterId !== null,
    isActive: values.isActive !== undefined,
    productId: values.productId !== undefined,
  }),
  (db, slot, shape) =>
    db
      .selectFrom('api_keys as k')
      .leftJoin(
        bundlePageQuery(db, slot.accountId, {
          afterId: shape.after ? slot.afterId : null,
          isActive: shape.isActive ? slot.isActive : undefined,
          productId: shape.productId ? slot.productId : undefined,
          limit: slot.limit,
        }).as('b'),
        (join) => join.onTrue(),
      )
      .select('k.revoked_at')
      .selectAll('b')
      .where('k.account_id', '=', slot.accountId)
      .where('k.id', '=', slot.keyId)
      .orderBy('b.id'),
);

/** A page of bundles (bundlePageQuery), and whether the account's key `keyId` is still live, in one statement. */
export async function listBundlesAfter(
  db: Executor,
  accountId: string,
  keyId: string,
  page: PageRequest,
): Promise<{ keyLive: boolean; rows: { row: BundleRow; counts: OptionCounts }[] }> {
  // One plan suits every page: a range of an index in id order, up to the limit.
  const { rows } = await db.executeQuery(pageWithKey(db, { accountId, keyId, ...page }, { prepared: true }));
  const [first] = rows;
  return {
    keyLive: first !== undefined && first.revoked_at === null,
    rows: rows.flatMap(({ revoked_at, included_options, add_on_options, ...row }) =>
      row.id === null
        ? []
        : [
            {
              row: row as BundleRow,
              counts: { included: Number(included_options), addOn: Number(add_on_options) },
            },
          ],
    ),
  };
}
