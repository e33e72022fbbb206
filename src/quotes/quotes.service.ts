import { type Stamped, type StampedCache, throughStamps } from '../catalogue/stamped-cache.ts';
import type { Db } from '../db/database.ts';
import { readSnapshot } from '../db/snapshot.ts';
import type { AnswerGate } from '../http/heavy-answers.ts';
import { normaliseInstant } from '../price-books/instants.ts';
import { invalid, invalidOrUnknownReference } from '../problems.ts';
import { type CatalogueBundle, checkQuoteRequest, priceQuote } from './quotes.engine.ts';
import { loadQuoteCatalogue } from './quotes.repository.ts';
import type { Quote, QuoteRequest } from './quotes.schemas.ts';

/** The bundles of a quote in one currency, as loaded for now. */
export interface CachedCatalogue extends Stamped {
  catalogue: Map<string, CatalogueBundle>;
}

/**
 * Checks and prices a configuration: a read, so nothing is written. Quotes for now reuse what `cache` holds
 * for the same bundles and currency while it still holds (StampedCache.through: the bundles' versions and the
 * books' effective windows, checked on every request); quotes for another instant (`at`) load afresh. Loading
 * a catalogue waits its turn at `gate`, as building bundle details does.
 */
export async function quote(
  db: Db,
  cache: StampedCache<CachedCatalogue> | null,
  gate: AnswerGate,
  accountId: string,
  request: QuoteRequest,
): Promise<Quote> {
  const problems = checkQuoteRequest(request);
  let at = new Date().toISOString();
  if (request.at !== undefined) {
    const normalised = normaliseInstant(request.at);
    if (normalised === null) {
      problems.push({
        code: 'unrepresentable_instant',
        in: 'body',
        pointer: '/at',
        message: 'is not an instant between years 0000 and 9999 in UTC',
      });
    } else {
      at = normalised;
    }
  }
  if (problems.length > 0) throw invalid('validation_failed', problems);

  const bundleIds = [...new Set(request.bundles.map((b) => b.bundleId))].sort();
  const load = (instant: string) =>
    gate.run(() =>
      readSnapshot(db, (tx) => loadQuoteCatalogue(tx, accountId, bundleIds, instant, request.currency)),
    );
  let catalogue: Map<string, CatalogueBundle>;
  if (request.at !== undefined || cache === null) {
    catalogue = (await load(at)).catalogue;
  } else {
    const key = JSON.stringify([accountId, request.currency, bundleIds]);
    const held = await throughStamps(db, cache, accountId, bundleIds, key, async (now) => {
      const { catalogue, books, stamps, weight } = await load(now);
      return { value: { catalogue, weight }, books, stamps };
    });
    catalogue = held.entry.catalogue;
    at = held.at;
  }
  const outcome = priceQuote(request, catalogue, at);
  if (!outcome.ok) throw invalidOrUnknownReference('quote_invalid', outcome.violations);
  return outcome.quote;
}
