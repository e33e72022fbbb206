// The load scenarios and what they send: the requests of `npm run bench` and of `npm run bench:compare`, built from
// the catalogue that bench/catalogue.ts loaded.

import { seededRandom } from '../test/helpers/random.ts';
import type { SeededBundle, SeededProduct } from './catalogue.ts';
import type { Target } from './load.ts';

export const pageSize = 25;
export const deepPage = 31;
export const quoteLines = 30;
const clickPaths = 8;

export class BenchError extends Error {}

export interface Scenario {
  name: string;
  title: string;
  path: string;
  /** For the ceiling: the service path whose answer it serves, byte for byte. */
  copyOf?: string;
  method?: 'POST';
  body?: string;
  /** Several bodies, sent in turn on every connection (the first is `body`). */
  bodies?: string[];
  /** Request headers besides the key. */
  headers?: Record<string, string>;
  /** The Content-Encoding its answer must come in, when it must. */
  encoding?: string;
  /** What a good answer holds; checked once before the load, so a wrong answer never gets measured. */
  check: (body: Json) => boolean;
  /** The answer is not JSON: `check` gets its text. */
  raw?: boolean;
  /** Connections to drive it with, where not the run's 50. */
  connections?: number;
}

// biome-ignore lint/suspicious/noExplicitAny: the checks read response JSON freely
export type Json = any;

export async function call(
  target: Target,
): Promise<{ status: number; text: string; encoding: string | null }> {
  const response = await fetch(target.url, {
    method: target.method ?? 'GET',
    headers: {
      ...target.headers,
      ...(target.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: target.body,
  });
  // fetch decodes br and gzip itself; the coding stays in the header.
  return {
    status: response.status,
    text: await response.text(),
    encoding: response.headers.get('content-encoding'),
  };
}

export async function callOk(target: Target): Promise<Json> {
  const { status, text } = await call(target);
  if (status < 200 || status > 299) {
    throw new BenchError(
      `${target.method ?? 'GET'} ${target.url} answered ${status}: ${text.slice(0, 2000)}`,
    );
  }
  return JSON.parse(text);
}

/** Each body of a target, or its one body (or none). */
export const bodiesOf = (target: Target): (string | undefined)[] => target.bodies ?? [target.body];

function quantityOf(product: SeededProduct): number {
  if (product.readonlyQuantity) return Math.max(product.minQuantity ?? 1, 1);
  // 12 falls in the second volume tier, so volume pricing does real work.
  return Math.min(Math.max(12, product.minQuantity ?? 1), product.maxQuantity ?? 12);
}

/** A valid quote: every INCLUDED option at its minCount at least, lines spread up to each option's maxCount. */
export function quoteBody(bundle: SeededBundle, lines: number): string {
  const capacity = bundle.options.map((o) => Math.min(o.maxCount ?? o.products.length, o.products.length));
  const picks = bundle.options.map((o) => (o.type === 'INCLUDED' ? (o.minCount ?? 1) : 0));
  let count = picks.reduce((a, b) => a + b, 0);
  while (count < lines) {
    const before = count;
    picks.forEach((picked, i) => {
      if (count < lines && picked < (capacity[i] as number)) {
        picks[i] = picked + 1;
        count++;
      }
    });
    if (count === before) throw new BenchError(`bundle ${bundle.id} cannot hold ${lines} quote lines`);
  }
  const options = bundle.options
    .map((option, i) => ({
      optionId: option.id,
      products: option.products.slice(0, picks[i]).map((p, j) => ({
        productId: p.productId,
        quantity: quantityOf(p),
        ...(p.adjustment === 'variant' ? { variantId: p.variantIds[j % p.variantIds.length] } : {}),
      })),
    }))
    .filter((o) => o.products.length > 0);
  return JSON.stringify({ currency: 'USD', bundles: [{ bundleId: bundle.id, quantity: 1, options }] });
}

const spread = <T>(items: T[], count: number): T[] =>
  Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)] as T);

const productsIn = (body: Json): number =>
  (body.bundles as Json[]).reduce(
    (sum: number, b: Json) =>
      sum + [...b.included, ...b.addOns].reduce((n: number, o: Json) => n + o.products.length, 0),
    0,
  );

export const configurePath = (bundle: SeededBundle) => `/v1/bundles/${bundle.id}/configure`;

/**
 * What a sales tool sends while a rep configures the bundle: nothing chosen, then one click after another, each
 * choosing a product the previous answer showed available (so every state is valid), in USD. `paths` reps, each
 * visiting the options in an order of their own, a seeded one; each click is one body.
 */
async function clickBodies(
  baseUrl: string,
  key: string,
  bundle: SeededBundle,
  paths: number,
): Promise<string[]> {
  const random = seededRandom(17);
  const bodies = [JSON.stringify({ currency: 'USD', selections: [] })];
  for (let path = 0; path < paths; path++) {
    const order = bundle.options.map((o) => ({ o, at: random() + (o.type === 'INCLUDED' ? 0 : 1) }));
    const selections: { optionId: string; productId: string }[] = [];
    for (const { o } of order.sort((a, b) => a.at - b.at).slice(0, 6)) {
      const answer = await callOk({
        url: `${baseUrl}${configurePath(bundle)}`,
        method: 'POST',
        headers: { 'x-api-key': key },
        body: JSON.stringify({ selections }),
      });
      const open = (answer.options as Json[])
        .find((option) => option.optionId === o.id)
        ?.products.filter((p: Json) => p.state === 'available') as Json[] | undefined;
      if (!open || open.length === 0) continue;
      const productId = open[Math.floor(random() * open.length)].productId as string;
      selections.push({ optionId: o.id, productId });
      bodies.push(JSON.stringify({ currency: 'USD', selections }));
    }
  }
  return bodies;
}

async function configureScenario(baseUrl: string, key: string, configured: SeededBundle): Promise<Scenario> {
  const clicks = await clickBodies(baseUrl, key, configured, clickPaths);
  return {
    name: 'configure',
    title:
      `POST /v1/bundles/{id}/configure, large bundle (${configured.productCount} products, ` +
      `${configured.rules} rules), ${clicks.length} click states in turn`,
    path: configurePath(configured),
    method: 'POST',
    body: clicks[0],
    bodies: clicks,
    check: (body) => body.valid === true && body.options.length === configured.options.length,
  };
}

/** The scenarios, in the order they run: the ceiling right before the details it is compared with. */
export async function scenariosFor(
  baseUrl: string,
  key: string,
  seeded: SeededBundle[],
): Promise<Scenario[]> {
  const large = seeded.find((b) => b.kind === 'large' && b.isActive);
  const searched = large?.options[0];
  if (!large || !searched) throw new BenchError('the catalogue has no large bundle');
  const typical = spread(
    seeded.filter((b) => b.kind === 'typical' && b.isActive),
    20,
  );
  // A catalogue loaded by a version from before rules (bench:compare's base) has no configure bundle.
  const configured = seeded.find((b) => b.kind === 'configure' && b.rules === 60 && b.productCount === 300);
  const configure = configured && (await configureScenario(baseUrl, key, configured));
  // The deep page's key comes from walking the list once, as a client would.
  let nextKey: unknown;
  for (let page = 1; page < deepPage; page++) {
    const query = page === 1 ? '' : `&nextKey=${encodeURIComponent(String(nextKey))}`;
    const url = `${baseUrl}/v1/bundles?limit=${pageSize}${query}`;
    nextKey = (await callOk({ url, headers: { 'x-api-key': key } })).nextKey;
    if (typeof nextKey !== 'string') throw new BenchError(`GET /v1/bundles gave no nextKey on page ${page}`);
  }
  const details = {
    path: `/v1/bundles-details?bundleIds=${large.id}`,
    check: (body: Json) => body.bundles.length === 1 && productsIn(body) === large.productCount,
  };
  return [
    {
      name: 'ceiling',
      title: 'Ceiling: bare node:http, details bytes from memory',
      path: '/ceiling',
      copyOf: details.path,
      check: details.check,
    },
    {
      name: 'details-1-large',
      title: `GET /v1/bundles-details, 1 large bundle (${large.productCount} products)`,
      ...details,
    },
    {
      name: 'details-1-large-br',
      title: 'The same with Accept-Encoding: br (the cached answer’s compressed bytes)',
      ...details,
      headers: { 'accept-encoding': 'br' },
      encoding: 'br',
    },
    {
      name: 'details-20-typical',
      title: 'GET /v1/bundles-details, 20 typical bundles',
      path: `/v1/bundles-details?bundleIds=${typical.map((b) => b.id).join(',')}`,
      check: (body) => body.bundles.length === 20,
    },
    {
      name: 'list-first-page',
      title: `GET /v1/bundles, first page (${pageSize})`,
      path: `/v1/bundles?limit=${pageSize}`,
      check: (body) => body.bundles.length === pageSize,
    },
    {
      name: 'list-deep-page',
      title: `GET /v1/bundles, page ${deepPage} via nextKey`,
      path: `/v1/bundles?limit=${pageSize}&nextKey=${encodeURIComponent(String(nextKey))}`,
      check: (body) => body.bundles.length === pageSize,
    },
    {
      name: 'quote-30-lines',
      title: `POST /v1/quotes/price, ${quoteLines} lines on a large bundle (USD)`,
      path: '/v1/quotes/price',
      method: 'POST',
      body: quoteBody(large, quoteLines),
      check: (body) => body.lines.length === quoteLines,
    },
    {
      name: 'quote-30-lines-compressed',
      title:
        'The same with Accept-Encoding: gzip, deflate, br (as fetch and browsers send; compressed for each answer)',
      path: '/v1/quotes/price',
      method: 'POST',
      body: quoteBody(large, quoteLines),
      headers: { 'accept-encoding': 'gzip, deflate, br' },
      encoding: 'br',
      check: (body) => body.lines.length === quoteLines,
    },
    {
      name: 'priced-products-search',
      title: 'GET /v1/pricebooks/{id}/pricedProducts?q=enterprise, large option',
      path: `/v1/pricebooks/${searched.priceBookId}/pricedProducts?q=enterprise`,
      check: (body) => body.results.length > 0 && body.total >= body.results.length,
    },
    ...(configure ? [configure] : []),
    ...(await quoteRecordScenarios(baseUrl, key, large, seeded)),
  ];
}

/** The PDF of a quote is measured at its latency, one request at a time per core. */
export const pdfConnections = 2;

/**
 * Saving a 30-line draft, reading a finalized quote of 30 lines beside the warm details of a bundle of about as many
 * products, and that quote's PDF. The quote read is made (saved, submitted, finalized) here, once.
 */
async function quoteRecordScenarios(
  baseUrl: string,
  key: string,
  large: SeededBundle,
  seeded: SeededBundle[],
): Promise<Scenario[]> {
  const body = quoteBody(large, quoteLines);
  const headers = { 'x-api-key': key };
  const made = await callOk({ url: `${baseUrl}/v1/quotes`, method: 'POST', headers, body });
  for (const action of ['submit', 'finalize']) {
    await callOk({ url: `${baseUrl}/v1/quotes/${made.id}/${action}`, method: 'POST', headers });
  }
  const sameSize = seeded
    .filter((b) => b.isActive && b.kind !== 'tiny')
    .reduce((best, b) =>
      Math.abs(b.productCount - quoteLines) < Math.abs(best.productCount - quoteLines) ? b : best,
    );
  return [
    {
      name: 'quote-save-30-lines',
      title: `POST /v1/quotes, a draft of ${quoteLines} lines on a large bundle, priced and saved`,
      path: '/v1/quotes',
      method: 'POST',
      body,
      check: (saved) => saved.lines.length === quoteLines && saved.violations.length === 0,
    },
    {
      name: 'quote-read-finalized',
      title: `GET /v1/quotes/{id}, an open (finalized) quote of ${quoteLines} lines`,
      path: `/v1/quotes/${made.id}`,
      check: (read) => read.status === 'open' && read.lines.length === quoteLines,
    },
    {
      name: 'details-same-size',
      title: `GET /v1/bundles-details, 1 bundle of ${sameSize.productCount} products (beside the quote read)`,
      path: `/v1/bundles-details?bundleIds=${sameSize.id}`,
      check: (details) => productsIn(details) === sameSize.productCount,
    },
    {
      name: 'quote-pdf-30-lines',
      title: `GET /v1/quotes/{id}/document as PDF, ${quoteLines} lines, ${pdfConnections} connections`,
      path: `/v1/quotes/${made.id}/document`,
      headers: { accept: 'application/pdf' },
      raw: true,
      connections: pdfConnections,
      check: (text: string) => text.startsWith('%PDF-'),
    },
  ];
}
