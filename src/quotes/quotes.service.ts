import { readInRounds } from '../catalogue/rounds.ts';
import type { Stamped, StampedCache } from '../catalogue/stamped-cache.ts';
import { throughStamps } from '../catalogue/through-stamps.ts';
import { invalid, invalidOrUnknownReference, type ProblemItem } from '../problems.ts';
import type { RecencyMap } from '../recency-map.ts';
import type { Configured } from '../rules/configurator.ts';
import { normaliseInstant } from '../shared/instants.ts';
import { confirmScopeKey, type RequestScope } from '../shared/scope.ts';
import { type CatalogueBundle, checkQuoteRequest, priceQuote } from './quotes.engine.ts';
import { loadQuoteCatalogue } from './quotes.repository.ts';
import type { Quote, QuoteRequest } from './quotes.schemas.ts';

/** The bundles of a quote in one currency (or none: no prices), as loaded for now. */
export interface CachedCatalogue extends Stamped {
  catalogue: Map<string, CatalogueBundle>;
  /**
   * What configure worked out on this state of the catalogue, by bundle and selections and rejections, or the bound
   * of its search that the search passed (configure.service.ts); weighed into the entry.
   */
  configured?: RecencyMap<KeptOutcome | Refusal>;
}

/**
 * The bound a configure search passed: its steps (CONFIGURE_MAX_STEPS), its CPU time (CONFIGURE_BUDGET_MS) or its
 * thread's memory.
 */
export type Refusal = 'steps' | 'time' | 'memory';

/** What configure worked out for one state of a bundle, with its answer's options as JSON in UTF-8. */
export interface KeptOutcome {
  configured: Configured;
  options: Buffer;
}

/** A catalogue held by the cache: what is kept beside it must be weighed into it (StampedCache.grow). */
export interface KeptCatalogue {
  entry: CachedCatalogue;
  /** Counts `bytes` more (or fewer, when negative) against the cache's bound. */
  grew: (bytes: number) => void;
}

/** The instant a request asks for, normalised to UTC; a 400 problem at /at when it cannot be represented. */
export function requestedInstant(
  at: string | undefined,
): { at: string | undefined } | { problem: ProblemItem } {
  if (at === undefined) return { at };
  const normalised = normaliseInstant(at);
  if (normalised !== null) return { at: normalised };
  return {
    problem: {
      code: 'unrepresentable_instant',
      in: 'body',
      pointer: '/at',
      message: 'is not an instant between years 0000 and 9999 in UTC',
    },
  };
}

/**
 * The catalogue of some bundles with prices in `currency` (none when null) and its instant: for now through `cache`
 * while its stamps hold (throughStamps), for another `at` loaded afresh, waiting its turn at the gate. `kept` is the
 * cache's entry, when it came through the cache, for what is worked out from it to be kept beside it.
 */
export async function catalogueOf(
  scope: RequestScope,
  {
    cache,
    request,
  }: {
    cache: StampedCache<CachedCatalogue> | null;
    request: { bundleIds: string[]; currency: string | null; at: string | undefined };
  },
): Promise<{ catalogue: Map<string, CatalogueBundle>; at: string; kept: KeptCatalogue | null }> {
  const { db } = scope;
  const accountId = scope.account.id;
  const bundleIds = [...new Set(request.bundleIds)].sort();
  const currency = request.currency ?? undefined;
  // A quote of many large bundles is read in rounds, as their details are (readInRounds).
  const load = (at: string) =>
    scope.limits.gate.run(accountId, () =>
      readInRounds(db, accountId, bundleIds, () => {
        const all: Awaited<ReturnType<typeof loadQuoteCatalogue>> = {
          catalogue: new Map(),
          books: [],
          stamps: new Map(),
          weight: 0,
        };
        return {
          round: async (tx, ids) => {
            const part = await loadQuoteCatalogue(tx, accountId, ids, at, currency);
            for (const [id, bundle] of part.catalogue) all.catalogue.set(id, bundle);
            all.books.push(...part.books);
            for (const [id, stamp] of part.stamps) all.stamps.set(id, stamp);
            all.weight += part.weight;
            return part.stamps;
          },
          result: () => all,
        };
      }),
    );
  if (request.at !== undefined || cache === null) {
    await confirmScopeKey(scope);
    const at = request.at ?? scope.now().toISOString();
    return { catalogue: (await load(at)).catalogue, at, kept: null };
  }
  const entryKey = JSON.stringify([accountId, request.currency, bundleIds]);
  const held = await throughStamps(scope, {
    cache,
    bundleIds,
    entryKey,
    build: async (now) => {
      const { catalogue, books, stamps, weight } = await load(now);
      return { value: { catalogue, weight }, books, stamps };
    },
  });
  const { entry } = held;
  const grew = (bytes: number) => cache.grow(entryKey, entry, bytes);
  return { catalogue: entry.catalogue, at: new Date(held.now).toISOString(), kept: { entry, grew } };
}

/** Checks and prices a configuration: a read, so nothing is written. */
export async function quote(
  scope: RequestScope,
  { request, cache }: { request: QuoteRequest; cache: StampedCache<CachedCatalogue> | null },
): Promise<Quote> {
  const problems = checkQuoteRequest(request);
  const instant = requestedInstant(request.at);
  if ('problem' in instant) problems.push(instant.problem);
  if (problems.length > 0 || 'problem' in instant) throw invalid('validation_failed', problems);
  const { catalogue, at } = await catalogueOf(scope, {
    cache,
    request: {
      bundleIds: request.bundles.map((b) => b.bundleId),
      currency: request.currency,
      at: instant.at,
    },
  });
  const outcome = priceQuote(request, catalogue, at);
  if (!outcome.ok) throw invalidOrUnknownReference('quote_invalid', outcome.violations);
  return outcome.quote;
}
