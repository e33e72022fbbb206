import type { RequestScope } from '../shared/scope.ts';
import { type CatalogueRows, loadStamps, loadStampsWithKey } from './catalogue.repository.ts';
import { nextBoundary, type Stamped, type StampedCache } from './stamped-cache.ts';

/**
 * The entry `cache` holds for the account's bundles `bundleIds`, or a new one `build` makes at `at`, kept: the one
 * stamp check of every catalogue cache, one statement outside any transaction that also confirms an unconfirmed key,
 * shared by like requests (SharedReads). With it comes `now`, when it was found to hold; a hit needs no text of it.
 */
export async function throughStamps<T extends Stamped>(
  scope: RequestScope,
  {
    cache,
    bundleIds,
    entryKey,
    build,
  }: {
    cache: StampedCache<T>;
    bundleIds: readonly string[];
    entryKey: string;
    build: (at: string) => Promise<{
      value: Omit<T, 'stamps' | 'validUntil'>;
      books: CatalogueRows['books'];
      stamps: Map<string, string>;
    }>;
  },
): Promise<{ entry: T; now: number }> {
  const { db } = scope;
  const accountId = scope.account.id;
  const keyId = scope.key?.id ?? null;
  const { stamps, keyLive } = await cache.stampReads.read(
    JSON.stringify([accountId, keyId, bundleIds]),
    async () =>
      keyId === null
        ? { stamps: await loadStamps(db, accountId, bundleIds), keyLive: true }
        : loadStampsWithKey(db, accountId, bundleIds, keyId),
  );
  scope.key?.confirm(keyLive);
  const now = scope.now().getTime();
  const entry = await cache.through(entryKey, stamps, now, async () => {
    const at = new Date(now).toISOString();
    const built = await build(at);
    return { ...built.value, stamps: built.stamps, validUntil: nextBoundary(built.books, at) } as T;
  });
  return { entry, now };
}
