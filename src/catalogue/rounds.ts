import type { Db, Executor } from '../db/database.ts';
import { readSnapshot } from '../db/snapshot.ts';
import { countProductsOfBundles, loadStamps } from './catalogue.repository.ts';

// A read of many bundles (details, a quote's catalogue) runs in rounds, each in its own snapshot, yielding to the event
// loop between them, so building many large bundles never holds off other requests, /healthz included. A round holds
// consecutive asked bundles of at most this many products in all (a larger bundle alone).
const PRODUCTS_PER_ROUND = 300;
/** Rounds that saw a bundle change under them are read again; past this many tries, all in one snapshot. */
const TRIES_IN_ROUNDS = 2;

/** Resolves after the other callbacks the event loop has ready, I/O included. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function sameStamps(read: Map<string, string>, now: Map<string, string>): boolean {
  if (read.size !== now.size) return false;
  for (const [id, stamp] of read) if (now.get(id) !== stamp) return false;
  return true;
}

/** The ids in rounds of at most PRODUCTS_PER_ROUND products (a larger bundle alone), in the order given. */
function roundsOf(ids: readonly string[], products: Map<string, number>): string[][] {
  const rounds: string[][] = [];
  let round: string[] = [];
  let inRound = 0;
  for (const id of ids) {
    const count = products.get(id) ?? 0;
    if (round.length > 0 && inRound + count > PRODUCTS_PER_ROUND) {
      rounds.push(round);
      round = [];
      inRound = 0;
    }
    round.push(id);
    inRound += count;
  }
  rounds.push(round);
  return rounds;
}

/** One try at reading every round: `round` reads some bundles in their snapshot and answers their stamps. */
export interface Reading<T> {
  round(tx: Executor, ids: string[]): Promise<Map<string, string>>;
  /** Called once each round's snapshot has closed: what the reading does with a round outside its transaction. */
  afterRound?(): Promise<void>;
  /** Called when the reading is given up: a round saw a bundle change, or one failed. */
  abandon?(): void;
  result(): T;
}

/**
 * What `begin()`'s reading makes of the bundles `ids`, in rounds planned from one count of each bundle's products
 * (null for one bundle). One committed state although each round has its own snapshot: the stamps, read again after
 * the last round, must be what each round read, else the rounds run again, and in the end all in one snapshot.
 */
export async function readInRounds<T>(
  db: Db,
  accountId: string,
  ids: readonly string[],
  begin: (products: Map<string, number> | null) => Reading<T>,
): Promise<T> {
  const products = ids.length <= 1 ? null : await countProductsOfBundles(db, accountId, ids);
  const rounds = products === null ? [[...ids]] : roundsOf(ids, products);
  for (let tries = 1; ; tries++) {
    const inOneSnapshot = tries > TRIES_IN_ROUNDS || rounds.length === 1;
    const reading = begin(products);
    const stamps = new Map<string, string>();
    try {
      for (const [i, round] of (inOneSnapshot ? [[...ids]] : rounds).entries()) {
        if (i > 0) await nextTurn();
        for (const [id, stamp] of await readSnapshot(db, (tx) => reading.round(tx, round)))
          stamps.set(id, stamp);
        await reading.afterRound?.();
      }
      if (inOneSnapshot || sameStamps(stamps, await loadStamps(db, accountId, ids))) return reading.result();
    } catch (error) {
      reading.abandon?.();
      throw error;
    }
    reading.abandon?.();
  }
}
