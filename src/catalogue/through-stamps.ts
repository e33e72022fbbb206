import type { RequestScope } from '../shared/scope.ts';
import { type CatalogueRows, loadStamps, loadStampsWithKey } from './catalogue.repository.ts';
import { nextBoundary, type Stamped, type StampedCache } from './stamped-cache.ts';

/**
 * The entry `cache` holds under `entryKey` for the account's bundles `bundleIds`, or, when it no longer holds, a new
 * one that `build` makes from the catalogue as it is now (`at`), kept. The one stamp check of every cache of the
 * catalogue: the bundles' stamps are read in one statement, outside any transaction, so a hit costs no more;
 * `build` reads the data and its stamps in one snapshot (see StampedCache.through), and the entry lasts until the
 * next effective-date boundary of a book it involves. The scope's key, when unconfirmed, is confirmed by the same
 * statement, before anything is answered or built: a warm read is that one statement, or a share of it, since
 * requests for the same bundles with the same key that come in one turn of the event loop share one (SharedReads).
 * With the entry comes `now`, the moment (ms) it was found to hold: its text is made only by a caller that needs
 * it, since a hit needs none.
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
