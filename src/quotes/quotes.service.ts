import type { Db } from '../db/database.ts';
import { invalid } from '../http/errors.ts';
import { normaliseInstant } from '../price-books/instants.ts';
import { checkQuoteRequest, priceQuote } from './quotes.engine.ts';
import { loadQuoteCatalogue } from './quotes.repository.ts';
import type { Quote, QuoteRequest } from './quotes.schemas.ts';

/** Checks and prices a configuration (C11): a read, so nothing is written. */
export async function quote(db: Db, accountId: string, request: QuoteRequest): Promise<Quote> {
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

  const bundleIds = [...new Set(request.bundles.map((b) => b.bundleId))];
  const catalogue = await loadQuoteCatalogue(db, accountId, bundleIds, at, request.currency);
  const outcome = priceQuote(request, catalogue, at);
  if (!outcome.ok) throw invalid('quote_invalid', outcome.violations);
  return outcome.quote;
}
