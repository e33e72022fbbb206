import type { SharedReads } from '../catalogue/shared-reads.ts';
import type { Executor } from '../db/database.ts';
import { type ExpectedVersions, lockBundle, lockRoot, type Versioned } from '../db/roots.ts';
import { readSnapshot } from '../db/snapshot.ts';
import type { EventType } from '../events/events.schemas.ts';
import { recordEvent } from '../events/outbox.ts';
import { decodeNextKey, encodeNextKey } from '../http/next-key.ts';
import { newId } from '../ids.ts';
import { copyOptions } from '../options/option-copy.ts';
import { insertOption, optionCreateConflicts, optionCreateProblems } from '../options/option-create.ts';
import { listOptionsOfBundle } from '../options/options.repository.ts';
import { placedOrders } from '../options/options.schemas.ts';
import { notFound, throwIfConflicts, throwIfProblems } from '../problems.ts';
import { copyRules } from '../rules/rule-references.ts';
import type { RequestScope } from '../shared/scope.ts';
import {
  type BundleRow,
  deleteBundle as deleteBundleRow,
  findBundle,
  insertBundle,
  listBundlesAfter,
  toBundle,
  updateBundle,
} from './bundles.repository.ts';
import type {
  Bundle,
  BundleCloneBody,
  BundleCreateBody,
  BundleListQuery,
  BundlePatchBody,
} from './bundles.schemas.ts';

/** The list form as it now is; read after a write, as the triggers move the version with the option counts. */
async function readBundle(db: Executor, accountId: string, id: string): Promise<Versioned<Bundle>> {
  const row = await findBundle(db, accountId, id);
  if (!row) throw notFound('Bundle', id);
  return { value: toBundle(row), version: row.version };
}

/** The list form after a write, recorded as the write's event. */
async function readBundleAfter(
  scope: RequestScope,
  tx: Executor,
  id: string,
  type: EventType,
): Promise<Versioned<Bundle>> {
  const bundle = await readBundle(tx, scope.account.id, id);
  await recordEvent(scope, tx, type, bundle.value);
  return bundle;
}

export async function createBundle(scope: RequestScope, body: BundleCreateBody): Promise<Versioned<Bundle>> {
  const accountId = scope.account.id;
  const options = body.options ?? [];
  throwIfProblems(options.flatMap((option, i) => optionCreateProblems(option, `/options/${i}`)));
  throwIfConflicts(options.flatMap((option, i) => optionCreateConflicts(option, `/options/${i}`)));
  return scope.db.transaction().execute(async (tx) => {
    const now = scope.now().toISOString();
    const row: BundleRow = {
      account_id: accountId,
      id: newId('bundle'),
      is_active: body.isActive ?? true,
      header_product_id: body.header.productId,
      header_properties: JSON.stringify(body.header.properties),
      cloned_bundle_temp_name: null,
      catalogue_key: null,
      version: 1,
      tree_version: 0,
      included_options_count: 0,
      add_on_options_count: 0,
      created_at: now,
      updated_at: now,
    };
    await insertBundle(tx, row);
    const orders = placedOrders(options);
    for (const [i, option] of options.entries()) {
      await insertOption(tx, accountId, row.id, option, orders[i] as number, now);
    }
    return readBundleAfter(scope, tx, row.id, 'bundle.created');
  });
}

export function getBundle(scope: RequestScope, bundleId: string): Promise<Versioned<Bundle>> {
  return readSnapshot(scope.db, (tx) => readBundle(tx, scope.account.id, bundleId));
}

/** A page of the list as answered, and whether the key that read it is still live. */
export interface ListedPage {
  keyLive: boolean;
  page: { bundles: Bundle[]; nextKey?: string };
}

/**
 * One statement, which also confirms the scope's key when it is unconfirmed. Requests for the same page with the
 * same key in one turn of the event loop share one such statement (SharedReads), as warm details share their stamp
 * check: none is answered from a read that began before it came. The page they share is only read, never changed.
 */
export async function listBundles(
  scope: RequestScope,
  { query, reads }: { query: BundleListQuery; reads: SharedReads<ListedPage> },
): Promise<ListedPage['page']> {
  const { db, account } = scope;
  const limit = query.limit ?? 25;
  const afterId = query.nextKey === undefined ? null : decodeNextKey(query.nextKey, 'bundle');
  const { isActive, productId } = query;
  const shared = JSON.stringify([
    account.id,
    account.keyId,
    afterId,
    isActive ?? null,
    productId ?? null,
    limit,
  ]);
  const listed = await reads.read(shared, async () => {
    // One row past the page says whether another page exists, without counting.
    const { keyLive, rows } = await listBundlesAfter(db, account.id, account.keyId, {
      afterId,
      isActive,
      productId,
      limit: limit + 1,
    });
    const bundles = rows.slice(0, limit).map(toBundle);
    const last = bundles.at(-1);
    return {
      keyLive,
      page: rows.length > limit && last ? { bundles, nextKey: encodeNextKey(last.id) } : { bundles },
    };
  });
  scope.key?.confirm(listed.keyLive);
  return listed.page;
}

export async function patchBundle(
  scope: RequestScope,
  { bundleId, body, expected }: { bundleId: string; body: BundlePatchBody; expected: ExpectedVersions },
): Promise<Versioned<Bundle>> {
  const accountId = scope.account.id;
  return scope.db.transaction().execute(async (tx) => {
    const current = await lockRoot(tx, 'bundles', { accountId, id: bundleId }, expected);
    if (!current) throw notFound('Bundle', bundleId);
    const relinked = body.header !== undefined && body.header.productId !== current.header_product_id;
    const updated: BundleRow = {
      ...current,
      is_active: body.isActive ?? current.is_active,
      header_product_id: body.header?.productId ?? current.header_product_id,
      header_properties: body.header ? JSON.stringify(body.header.properties) : current.header_properties,
      cloned_bundle_temp_name:
        body.clonedBundleTempName !== undefined
          ? body.clonedBundleTempName
          : relinked
            ? null
            : current.cloned_bundle_temp_name,
      updated_at: scope.now().toISOString(),
    };
    await updateBundle(tx, accountId, bundleId, {
      is_active: updated.is_active,
      header_product_id: updated.header_product_id,
      header_properties: updated.header_properties,
      cloned_bundle_temp_name: updated.cloned_bundle_temp_name,
      updated_at: updated.updated_at,
    });
    return readBundleAfter(scope, tx, bundleId, 'bundle.updated');
  });
}

export async function deleteBundle(
  scope: RequestScope,
  { bundleId, expected }: { bundleId: string; expected: ExpectedVersions },
): Promise<void> {
  const accountId = scope.account.id;
  await scope.db.transaction().execute(async (tx) => {
    if (!(await lockRoot(tx, 'bundles', { accountId, id: bundleId }, expected))) {
      throw notFound('Bundle', bundleId);
    }
    await deleteBundleRow(tx, accountId, bundleId);
    await recordEvent(scope, tx, 'bundle.deleted', { id: bundleId, deleted: true });
  });
}

/** A deep copy, inactive, carrying a temporary name until a new header product is linked. */
export async function cloneBundle(
  scope: RequestScope,
  { bundleId, body }: { bundleId: string; body: BundleCloneBody },
): Promise<Versioned<Bundle>> {
  const accountId = scope.account.id;
  return scope.db.transaction().execute(async (tx) => {
    // The source is only read, but under its lock, as every write to it takes that lock first: no write or delete
    // lands between the statements that copy it, so the copy is of one committed state, or the source is gone.
    const source = (await lockBundle(tx, accountId, bundleId)) && (await findBundle(tx, accountId, bundleId));
    if (!source) throw notFound('Bundle', bundleId);
    const now = scope.now().toISOString();
    const copy: BundleRow = {
      ...source,
      id: newId('bundle'),
      is_active: false,
      cloned_bundle_temp_name: body.tempName ?? `Copy of ${source.id}`,
      // A catalogue key names one bundle: the copy is known by its header productId until a file names it.
      catalogue_key: null,
      version: 1,
      tree_version: 0,
      included_options_count: 0,
      add_on_options_count: 0,
      created_at: now,
      updated_at: now,
    };
    await insertBundle(tx, copy);
    const sources = await listOptionsOfBundle(tx, accountId, bundleId);
    const { options } = await copyOptions(tx, accountId, sources, {
      bundleId: copy.id,
      priceBooks: 'all',
      now,
    });
    const optionIds = new Map(sources.map((source, i) => [source.id, options[i]?.id ?? source.id]));
    await copyRules(tx, accountId, bundleId, { bundleId: copy.id, optionIds, now });
    return readBundleAfter(scope, tx, copy.id, 'bundle.cloned');
  });
}
