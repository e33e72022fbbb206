import { type CatalogueRows, loadCatalogueRows, stampsOf } from '../catalogue/catalogue.repository.ts';
import { nextTurn, readInRounds } from '../catalogue/rounds.ts';
import type { StampedCache } from '../catalogue/stamped-cache.ts';
import { toAdjustment, toPrice } from '../catalogue/stored-prices.ts';
import { throughStamps } from '../catalogue/through-stamps.ts';
import type { Db } from '../db/database.ts';
import { invalid } from '../problems.ts';
import { type Coding, compressParts, minCompressedBytes } from '../shared/compression.ts';
import { AnswerBudget } from '../shared/heavy-answers.ts';
import { normaliseInstant } from '../shared/instants.ts';
import { MAX_PROPERTY_NAME_LENGTH, MAX_PROPERTY_NAMES } from '../shared/schemas.ts';
import { confirmScopeKey, type RequestScope } from '../shared/scope.ts';
import {
  type BundleDetailOption,
  type BundleDetailOptionProduct,
  type BundleDetails,
  type BundleDetailsQuery,
  type BundleDetailsResponse,
  MAX_BUNDLE_IDS,
} from './bundle-details.schemas.ts';
import { type CachedDetails, DetailsAnswer, type WrittenAnswer } from './details-answer.ts';

type Properties = Record<string, string | null>;

function queryProblem(field: string, code: string, message: string) {
  return invalid('validation_failed', [{ code, in: 'query', pointer: `/${field}`, message }]);
}

/** A comma-separated list, each name trimmed and kept once, in order. */
function splitList(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()))];
}

function bundleIdsOf(text: string): string[] {
  const ids = splitList(text);
  if (ids.includes('')) return [];
  return ids;
}

// What an answer holds besides the text of ids, names, properties and adjustments, in characters of JSON: the
// member names and small values of a product, a price in one currency, an option, a bundle.
const PRODUCT_CHARACTERS = 180;
const PRICE_CHARACTERS = 50;
const OPTION_CHARACTERS = 150;
const BUNDLE_CHARACTERS = 90;

/** What the asked names take in each properties map at least, in characters of JSON (`"name":null,`). */
function namesCharactersOf(names: string[]): number {
  return names.reduce((sum, name) => sum + name.length + 8, 0);
}

/**
 * Exactly the asked keys, null where missing; every stored property when nothing was asked. Each map is counted
 * against the budget before it is made: asked names are repeated in every one, the way a small request asks for a
 * large answer.
 */
function projection(names: string[] | null, budget: AnswerBudget): (json: string) => Properties {
  if (names === null) {
    return (json) => {
      budget.spend(json.length);
      return JSON.parse(json) as Properties;
    };
  }
  const namesCharacters = namesCharactersOf(names);
  return (json) => {
    budget.spend(namesCharacters + json.length);
    const stored = JSON.parse(json) as Properties;
    // Names are the client's: `constructor` must not be read from the prototype, nor `__proto__` set it.
    const out: Properties = Object.create(null);
    for (const name of names) out[name] = Object.hasOwn(stored, name) ? (stored[name] ?? null) : null;
    return out;
  };
}

type PriceMaps = Pick<BundleDetailOptionProduct, 'adjustments' | 'standardPrice' | 'listPrice'>;

function assemble(
  rows: CatalogueRows,
  properties: (json: string) => Properties,
  budget: AnswerBudget,
): Map<string, BundleDetails> {
  // A product's price rows are consecutive, so its maps are built from one run of rows.
  const pricesOf = new Map<string, PriceMaps>();
  let maps: PriceMaps | undefined;
  let last: CatalogueRows['prices'][number] | undefined;
  for (const price of rows.prices) {
    if (!maps || price.option_id !== last?.option_id || price.product_id !== last.product_id) {
      maps = { adjustments: {}, standardPrice: {}, listPrice: {} };
      pricesOf.set(`${price.option_id}\n${price.product_id}`, maps);
      last = price;
    }
    budget.spend(PRICE_CHARACTERS + (price.adjustment?.length ?? 0));
    maps.adjustments[price.currency] = toAdjustment(
      price.adjustment,
      Boolean(price.allow_unit_price_editing),
    );
    maps.standardPrice[price.currency] = toPrice(price.standard_price);
    maps.listPrice[price.currency] = toPrice(price.list_price);
  }

  const productsOf = new Map<string, BundleDetailOptionProduct[]>();
  for (const row of rows.products) {
    const maps = pricesOf.get(`${row.option_id}\n${row.product_id}`);
    budget.spend(PRODUCT_CHARACTERS + row.id.length + row.product_id.length);
    const product: BundleDetailOptionProduct = {
      id: row.id,
      productId: row.product_id,
      properties: properties(row.properties),
      configuration: {
        minQuantity: row.min_quantity,
        maxQuantity: row.max_quantity,
        readonlyQuantity: row.readonly_quantity === null ? null : Boolean(row.readonly_quantity),
      },
      displayOrder: row.display_order,
      adjustments: maps?.adjustments ?? {},
      standardPrice: maps?.standardPrice ?? {},
      listPrice: maps?.listPrice ?? {},
    };
    const list = productsOf.get(row.option_id);
    if (list) list.push(product);
    else productsOf.set(row.option_id, [product]);
  }

  const details = new Map<string, BundleDetails>();
  for (const row of rows.bundles) {
    budget.spend(BUNDLE_CHARACTERS + row.id.length + row.header_product_id.length);
    details.set(row.id, {
      id: row.id,
      isActive: Boolean(row.is_active),
      header: { productId: row.header_product_id, properties: properties(row.header_properties) },
      included: [],
      addOns: [],
    });
  }
  for (const row of rows.options) {
    budget.spend(OPTION_CHARACTERS + row.id.length + row.name.length);
    const option: BundleDetailOption = {
      id: row.id,
      name: row.name,
      displayOrder: row.display_order,
      configuration: {
        minCount: row.min_count,
        maxCount: row.max_count,
        defaultOptionProductId: row.default_option_product_id,
      },
      products: productsOf.get(row.id) ?? [],
    };
    const bundle = details.get(row.bundle_id);
    if (bundle) (row.type === 'INCLUDED' ? bundle.included : bundle.addOns).push(option);
  }
  return details;
}

interface DetailsRequest {
  ids: string[];
  /** The instant asked for, in stored form; null for now. */
  at: string | null;
  names: string[] | null;
}

/** The names asked for, bounded as stored names are, since each is a key of every properties map answered. */
function propertyNamesOf(text: string): string[] {
  const names = splitList(text).filter((n) => n !== '');
  if (names.length > MAX_PROPERTY_NAMES) {
    throw queryProblem('properties', 'too_many_names', `must name at most ${MAX_PROPERTY_NAMES} properties`);
  }
  const long = names.find((n) => [...n].length > MAX_PROPERTY_NAME_LENGTH);
  if (long !== undefined) {
    throw queryProblem(
      'properties',
      'name_too_long',
      `names must be 1-${MAX_PROPERTY_NAME_LENGTH} characters; one has ${[...long].length}`,
    );
  }
  return names;
}

function parseQuery(query: BundleDetailsQuery): DetailsRequest {
  const ids = bundleIdsOf(query.bundleIds);
  if (ids.length === 0) {
    throw queryProblem('bundleIds', 'empty_id', 'must be a comma-separated list of ids, none of them empty');
  }
  if (query.bundleIds.split(',').length > MAX_BUNDLE_IDS) {
    throw queryProblem('bundleIds', 'too_many_ids', `must name at most ${MAX_BUNDLE_IDS} bundles`);
  }
  let at: string | null = null;
  if (query.at !== undefined) {
    at = normaliseInstant(query.at);
    if (at === null) {
      throw queryProblem(
        'at',
        'unrepresentable_instant',
        'is not an instant between years 0000 and 9999 in UTC',
      );
    }
  }
  const names = query.properties === undefined ? null : propertyNamesOf(query.properties);
  return { ids, at, names };
}

function budgetFor(request: DetailsRequest, maxBytes: number): AnswerBudget {
  return new AnswerBudget(
    maxBytes,
    `ask for fewer bundles${request.names === null ? ', or name only the properties needed' : ' or properties'}`,
  );
}

/** What a reading makes of the bundles it builds, each handed to `add` as its round is built. */
interface DetailsSink {
  add(details: BundleDetails): void;
  afterRound?(): Promise<void>;
  abandon?(): void;
}

interface Built<S extends DetailsSink> {
  /** The sink of the reading that stood, given every bundle found, in the order asked. */
  answer: S;
  notFound: string[];
  books: CatalogueRows['books'];
  stamps: Map<string, string>;
}

/**
 * The asked bundles read at `at` and built in rounds, one committed state (readInRounds), each handed to the
 * reading's sink (`newSink()`, which serializes it, say) as its round is built, within `maxBytes`: 422
 * answer_too_large as soon as the answer passes it. With properties named, every product's and every header's map
 * holds each name: an answer that cannot fit on the count of products alone is refused before any of it is read.
 */
async function buildDetails<S extends DetailsSink>(
  db: Db,
  maxBytes: number,
  accountId: string,
  request: DetailsRequest,
  at: string,
  newSink: () => S,
): Promise<Built<S>> {
  return readInRounds(db, accountId, request.ids, (products) => {
    if (request.names !== null && products !== null) {
      let maps = request.ids.length;
      for (const count of products.values()) maps += count;
      budgetFor(request, maxBytes).spend(maps * namesCharactersOf(request.names));
    }
    const budget = budgetFor(request, maxBytes);
    const properties = projection(request.names, budget);
    const built: Built<S> = { answer: newSink(), notFound: [], books: [], stamps: new Map() };
    // The rows of the round read last, built once its snapshot has closed.
    let read: { ids: string[]; rows: CatalogueRows } | null = null;
    return {
      round: async (tx, ids) => {
        const rows = await loadCatalogueRows(tx, accountId, ids, at);
        read = { ids, rows };
        built.books.push(...rows.books);
        const stamps = stampsOf(rows.bundles);
        for (const [id, stamp] of stamps) built.stamps.set(id, stamp);
        return stamps;
      },
      // Reading a round, building its bundles and serializing them are each tens of milliseconds of synchronous
      // work for a large round: run as one task, they made every other request, /healthz included, wait for all
      // three. The building waits a turn of the event loop, and so does serializing, outside the snapshot.
      afterRound: async () => {
        if (read === null) return;
        const { ids, rows } = read;
        read = null;
        await nextTurn();
        const details = assemble(rows, properties, budget);
        await nextTurn();
        for (const id of ids) {
          const found = details.get(id);
          if (found) built.answer.add(found);
          else built.notFound.push(id);
        }
        await built.answer.afterRound?.();
      },
      abandon: () => built.answer.abandon?.(),
      result: () => built,
    };
  });
}

export async function getBundleDetails(
  scope: RequestScope,
  query: BundleDetailsQuery,
): Promise<BundleDetailsResponse> {
  const { db, limits } = scope;
  const request = parseQuery(query);
  const at = request.at ?? scope.now().toISOString();
  return limits.gate.run(scope.account.id, async () => {
    const { answer, notFound } = await buildDetails(
      db,
      limits.answerMaxBytes,
      scope.account.id,
      request,
      at,
      () => {
        const bundles: BundleDetails[] = [];
        return { bundles, add: (details: BundleDetails) => bundles.push(details) };
      },
    );
    return { bundles: answer.bundles, notFound };
  });
}

/**
 * A cached answer in `coding`, compressed once per version: the first request for that coding makes it (the others
 * wait for the same), and the cache then counts its bytes.
 */
function encodedParts(
  cache: StampedCache<CachedDetails>,
  key: string,
  entry: CachedDetails,
  coding: Coding,
): Promise<Buffer[]> {
  entry.encoded ??= {};
  const encoded = entry.encoded;
  const made = encoded[coding];
  if (made) return made;
  const making = compressParts(entry.parts, coding, 'once').then(
    (parts) => {
      const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
      cache.grow(key, entry, bytes);
      return parts;
    },
    (error: unknown) => {
      delete encoded[coding];
      throw error;
    },
  );
  encoded[coding] = making;
  return making;
}

/**
 * The details answer as bytes, with its ETag, built within `limits`. Serialized with JSON.stringify: the response
 * schema's adjustment union makes fast-json-stringify run a validator per value. Answers for now are kept in
 * `cache`, keyed by the query as asked, and reused only while every asked bundle's (version, tree_version) is what
 * it was, read again here in one indexed query, and no book's effective window has opened or closed since
 * (StampedCache.through). The triggers keep tree_version in the writing transaction, so this holds across
 * instances on one database. The request's `key`, when unconfirmed, is confirmed by that same query (by a lookup of
 * its own otherwise). An answer of 1 KB or more goes out in the coding the client `accepts`: a kept one's
 * compressed forms are kept beside it, and one not kept (for another instant `at`) is compressed as it is built.
 */
export async function bundleDetailsBytes(
  scope: RequestScope,
  {
    query,
    cache,
    accepts,
  }: { query: BundleDetailsQuery; cache: StampedCache<CachedDetails> | null; accepts: Coding | null },
): Promise<WrittenAnswer> {
  const { db, limits } = scope;
  const accountId = scope.account.id;
  const request = parseQuery(query);
  // Built and serialized within the gate: both take the time and memory it bounds. A cached answer does not wait.
  // Each bundle is serialized as soon as its round is built, so only one round's objects are held at a time.
  const build = (at: string, coding: Coding | null) =>
    limits.gate.run(accountId, async () => {
      const built = await buildDetails(
        db,
        limits.answerMaxBytes,
        accountId,
        request,
        at,
        () => new DetailsAnswer(coding),
      );
      return { ...built, written: await built.answer.finish(built.notFound) };
    });
  if (request.at !== null || cache === null) {
    await confirmScopeKey(scope);
    return (await build(request.at ?? scope.now().toISOString(), accepts)).written;
  }
  const entryKey = JSON.stringify([accountId, query.bundleIds, query.properties ?? null]);
  const { entry } = await throughStamps(scope, {
    cache,
    bundleIds: request.ids,
    entryKey,
    build: async (at) => {
      const { written, books, stamps } = await build(at, null);
      const { parts, bytes, etag } = written;
      return { value: { parts, bytes, etag, weight: bytes }, books, stamps };
    },
  });
  const { parts, bytes, etag } = entry;
  const coding = bytes < minCompressedBytes ? null : accepts;
  if (coding === null) return { parts, bytes, etag, coding };
  const encoded = await encodedParts(cache, entryKey, entry, coding);
  return { parts: encoded, bytes: encoded.reduce((sum, part) => sum + part.byteLength, 0), etag, coding };
}
