import { type Selectable, sql } from 'kysely';
import type { Database, Executor } from './database.ts';
import { StaleVersionError } from './errors.ts';

/**
 * The concurrency roots: every write names one, and its version moves with every change to what it answers for
 * (a bundle: its list form; an option: itself and its products; a price book: itself and its entries; a rule:
 * itself; a webhook endpoint, an approval policy: itself).
 */
export type Root =
  | 'bundles'
  | 'bundle_options'
  | 'price_books'
  | 'bundle_rules'
  | 'webhook_endpoints'
  | 'approval_policies';

/** The versions If-Match accepts: null for any (no If-Match, or `*`), else these (none: nothing can match). */
export type ExpectedVersions = readonly number[] | null;

/** A response and the version of the root it was read from or written to, for its ETag. */
export interface Versioned<T> {
  value: T;
  version: number;
}

interface RootKey {
  accountId: string;
  id: string;
  /** An option is found within the bundle its path names, when there is one. */
  bundleId?: string;
}

/** The bundle of a root that names its bundle: the path's, when it gives one, else the row's own. */
const ownBundle = (table: 'bundle_options' | 'bundle_rules') => (key: RootKey) =>
  key.bundleId === undefined
    ? sql`(select bundle_id from ${sql.table(table)} where account_id = ${key.accountId} and id = ${key.id})`
    : sql`${key.bundleId}`;

/** The bundle a root of a bundle belongs to, as SQL. */
const bundleOfRoot: Partial<Record<Root, (key: RootKey) => ReturnType<typeof sql>>> = {
  bundle_options: ownBundle('bundle_options'),
  bundle_rules: ownBundle('bundle_rules'),
  price_books: (key: RootKey) =>
    sql`(select o.bundle_id from price_books b join bundle_options o
          on o.account_id = b.account_id and o.id = b.bundle_option_id
          where b.account_id = ${key.accountId} and b.id = ${key.id})`,
};

/**
 * Takes a bundle's write lock (its row on PostgreSQL; SQLite runs one transaction at a time). Every write inside a
 * bundle takes it first, and the tree_version triggers update the bundle row anyway, so no write holds a row of the
 * bundle while waiting for the bundle: no deadlock, whole-bundle deletes included. Says whether the bundle exists.
 */
export async function lockBundle(tx: Executor, accountId: string, bundleId: string): Promise<boolean> {
  return lockBundleWhere(tx, accountId, sql`${bundleId}`);
}

async function lockBundleWhere(tx: Executor, accountId: string, bundleId: ReturnType<typeof sql>) {
  const result = await sql`update bundles set tree_version = tree_version + 1
    where account_id = ${accountId} and id = ${bundleId}`.execute(tx);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * Opens a write to a root: one conditional UPDATE moves its version on, only from a version If-Match allows, so of
 * concurrent writers with one ETag exactly one matches (PostgreSQL re-checks the locked row). Undefined when the root
 * does not exist (404); StaleVersionError (412) at another version. Run it first in the write's transaction.
 */
export async function lockRoot<R extends Root>(
  tx: Executor,
  root: R,
  key: RootKey,
  expected: ExpectedVersions,
): Promise<Selectable<Database[R]> | undefined> {
  // A root inside a bundle takes the bundle's lock first; the other roots are their own.
  const bundleOf = bundleOfRoot[root];
  if (bundleOf) await lockBundleWhere(tx, key.accountId, bundleOf(key));
  // Typed as the bundles table: the columns used here are common to every root.
  const table = root as 'bundles';
  const inScope = sql<boolean>`bundle_id = ${key.bundleId}`;
  if (expected === null || expected.length > 0) {
    const row = await tx
      .updateTable(table)
      .set((eb) => ({ version: eb('version', '+', 1), updated_at: new Date().toISOString() }))
      .where('account_id', '=', key.accountId)
      .where('id', '=', key.id)
      .$if(key.bundleId !== undefined, (query) => query.where(inScope))
      .$if(expected !== null, (query) => query.where('version', 'in', expected as number[]))
      .returningAll()
      .executeTakeFirst();
    if (row || expected === null) return row as Selectable<Database[R]> | undefined;
  }
  const exists = await tx
    .selectFrom(table)
    .select('version')
    .where('account_id', '=', key.accountId)
    .where('id', '=', key.id)
    .$if(key.bundleId !== undefined, (query) => query.where(inScope))
    .executeTakeFirst();
  if (exists) throw new StaleVersionError();
  return undefined;
}
