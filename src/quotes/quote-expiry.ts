import type { Db } from '../db/database.ts';
import { recordEvents } from '../events/outbox.ts';
import { repeatEvery } from '../shared/repeat.ts';
import { scopeOutsideHttp } from '../shared/scope.ts';
import { markExpired, type QuoteRow } from './quote-records.repository.ts';
import { toSavedQuote } from './quote-records.service.ts';

/** How often each instance looks for open quotes that have expired since. */
export const EXPIRY_SWEEP_MS = 30_000;

/** Quotes marked per transaction: short ones, that keep a read of the feed waiting briefly. */
export const EXPIRY_BATCH = 200;

/**
 * Records `quote.expired` for every open quote whose expiresAt has passed at `now`, exactly once per quote however
 * many instances sweep at once: each batch is marked by one compare-and-set (markExpired) and its events are recorded
 * in the same transaction, so a quote marked is a quote whose event committed. Answers how many were recorded.
 */
export async function recordQuoteExpiries(db: Db, now: Date = new Date()): Promise<number> {
  const at = now.toISOString();
  let total = 0;
  for (;;) {
    const marked = await db.transaction().execute(async (tx) => {
      const rows = await markExpired(tx, at, EXPIRY_BATCH);
      const byAccount = Map.groupBy(rows, (row) => row.account_id);
      for (const [accountId, quotes] of byAccount) {
        await recordEvents(
          scopeOutsideHttp(db, accountId),
          tx,
          quotes.map((row: QuoteRow) => ({ type: 'quote.expired' as const, object: toSavedQuote(row, at) })),
        );
      }
      return rows.length;
    });
    total += marked;
    if (marked < EXPIRY_BATCH) return total;
  }
}

/** Sweeps for expired quotes at start and every EXPIRY_SWEEP_MS, until the returned stop is called. */
export function scheduleQuoteExpiry(db: Db, onError: (error: unknown) => void): () => Promise<void> {
  return repeatEvery(EXPIRY_SWEEP_MS, () => recordQuoteExpiries(db), onError);
}
