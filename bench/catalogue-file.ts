// The `catalogue-file` scenario of `npm run bench`: a catalogue file of 1,000 bundles and about 200,000 price rows
// applied into an empty account over HTTP, exported, and applied again (an empty plan), each timed, with the
// service's peak RSS over its size just before (the target: under 100 MB more).
import type { Dialect } from '../src/db/database.ts';
import { createKey } from '../src/keys/keys.service.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { seededRandom } from '../test/helpers/random.ts';
import { peakRss, residentSetSize, ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';
import { BenchError } from './scenarios.ts';

export const catalogueFileShape = {
  bundles: 1000,
  options: 5,
  products: 10,
  currencies: ['USD', 'EUR', 'GBP', 'JPY'],
};
export const catalogueRssLimitBytes = 100e6;

export interface CatalogueStep {
  seconds: number;
  /** Peak RSS of the service during the step over its RSS just before it. */
  rssGrowthBytes: number;
}

/** Another account's writes and uncached reads, one after another, while the apply into an empty account runs. */
export interface Bystander {
  writes: number;
  slowestWriteMs: number;
  reads: number;
  slowestReadMs: number;
  /** Answers other than 2xx, by status. */
  failed: Record<string, number>;
}
export const bystanderWriteLimitMs = 2000;

export interface CatalogueFileResult {
  bundles: number;
  priceRows: number;
  fileBytes: number;
  exportBytes: number;
  applyEmpty: CatalogueStep;
  bystander: Bystander;
  export: CatalogueStep;
  applyUnchanged: CatalogueStep;
}

/** The file, as compact JSON: every option priced in four currencies, a quarter of the prices adjusted. */
export function catalogueText(bundles = catalogueFileShape.bundles): { text: string; priceRows: number } {
  const random = seededRandom(16);
  const money = () => Math.round(random() * 100_000) / 100;
  const { options, products, currencies } = catalogueFileShape;
  let priceRows = 0;
  const parts: string[] = [];
  for (let b = 0; b < bundles; b++) {
    const bundle = {
      header: { productId: `BENCH-${b}`, properties: { family: `F${b % 17}`, color: 'grey' } },
      options: Array.from({ length: options }, (_, o) => ({
        name: `Option ${o}`,
        type: o === 0 ? 'INCLUDED' : 'ADD_ON',
        configuration: { minCount: o === 0 ? 1 : null, maxCount: 3, defaultProductId: `P-${b}-${o}-0` },
        products: Array.from({ length: products }, (_, p) => ({
          productId: `P-${b}-${o}-${p}`,
          properties: { size: String(p), colour: p % 2 ? 'red' : 'blue' },
          entry: {
            prices: Object.fromEntries(
              currencies.map((currency) => {
                priceRows++;
                const adjusted = random() < 0.25;
                return [
                  currency,
                  {
                    standardPrice: money(),
                    listPrice: money(),
                    adjustment: adjusted
                      ? {
                          type: 'volume',
                          tiers: [
                            { firstUnit: 0, lastUnit: 9, unitPrice: money() },
                            { firstUnit: 10, unitPrice: money() },
                          ],
                        }
                      : null,
                  },
                ];
              }),
            ),
          },
        })),
      })),
      rules: [
        {
          name: 'first needs second',
          kind: 'requires',
          when: { option: 'Option 1' },
          // biome-ignore lint/suspicious/noThenProperty: a rule's `then`, as the file format names it
          then: [{ option: 'Option 2' }],
        },
      ],
    };
    parts.push(JSON.stringify(bundle));
  }
  return { text: `{"formatVersion":1,"bundles":[${parts.join(',')}]}`, priceRows };
}

/** Runs one step against the service, timing it and reading its peak RSS, with the elapsed time shown. */
async function step(
  service: ServiceUnderTest,
  what: string,
  run: () => Promise<void>,
): Promise<CatalogueStep> {
  await service.idle();
  const before = residentSetSize(service.child.pid);
  service.resetPeak();
  const started = performance.now();
  const timer = setInterval(
    () => progress.phase(`catalogue-file: ${what}: ${((performance.now() - started) / 1000).toFixed(0)} s`),
    1000,
  );
  try {
    progress.phase(`catalogue-file: ${what}`);
    await run();
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - started) / 1000;
  const rssGrowthBytes = peakRss(service.child.pid) - before;
  progress.done(
    `catalogue-file: ${what}: ${seconds.toFixed(1)} s, peak RSS +${(rssGrowthBytes / 1e6).toFixed(0)} MB`,
  );
  return { seconds, rssGrowthBytes };
}

async function post(url: string, key: string, body: string): Promise<{ summary: Record<string, number> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new BenchError(`POST ${url} answered ${response.status}: ${text.slice(0, 2000)}`);
  return JSON.parse(text);
}

/**
 * Until `done`, another account creates a bundle, then reads its details with `at` (which no cache answers), one
 * request at a time, timing each: what a tenant beside a large apply waits.
 */
async function bystand(baseUrl: string, key: string, done: () => boolean): Promise<Bystander> {
  const result: Bystander = { writes: 0, slowestWriteMs: 0, reads: 0, slowestReadMs: 0, failed: {} };
  const timed = async (method: string, path: string, body?: unknown) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.status >= 300) result.failed[response.status] = (result.failed[response.status] ?? 0) + 1;
    return { ms, body: response.status < 300 ? JSON.parse(text) : null };
  };
  for (let n = 0; !done(); n++) {
    const write = await timed('POST', '/v1/bundles', {
      header: { productId: `BYSTANDER-${n}`, properties: {} },
    });
    result.writes++;
    result.slowestWriteMs = Math.max(result.slowestWriteMs, write.ms);
    if (!write.body) continue;
    const at = encodeURIComponent(new Date().toISOString());
    const read = await timed('GET', `/v1/bundles-details?bundleIds=${write.body.id}&at=${at}`);
    result.reads++;
    result.slowestReadMs = Math.max(result.slowestReadMs, read.ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return result;
}

/** On a database of its own, with a service of its own, so nothing else is in its memory. */
export async function measureCatalogueFile(dialect: Dialect): Promise<CatalogueFileResult> {
  progress.phase('catalogue-file: making the file');
  const { text, priceRows } = catalogueText();
  const database = await createTestDatabase(dialect);
  // A file of this size is over the default CATALOGUE_BODY_LIMIT of 64 MiB only when pretty-printed; room anyway.
  process.env.CATALOGUE_BODY_LIMIT = String(512 * 1024 * 1024);
  process.env.REQUEST_TIMEOUT_MS = String(10 * 60 * 1000);
  try {
    const { plaintext: key } = await createKey(database.handle.db, {
      accountId: 'catalogue',
      name: null,
      readOnly: false,
    });
    const { plaintext: bystanderKey } = await createKey(database.handle.db, {
      accountId: 'bystander',
      name: null,
      readOnly: false,
    });
    const service = await ServiceUnderTest.start({
      databaseUrl: database.databaseUrl,
      sqlitePath: database.sqlitePath,
    });
    try {
      const url = `${service.baseUrl}/v1/catalogue`;
      let bystander: Promise<Bystander> | undefined;
      const applyEmpty = await step(
        service,
        `apply into an empty account (${(text.length / 1e6).toFixed(0)} MB)`,
        async () => {
          let applied = false;
          bystander = bystand(service.baseUrl, bystanderKey, () => applied);
          try {
            const plan = await post(`${url}/apply`, key, text);
            if (plan.summary.create !== catalogueFileShape.bundles)
              throw new BenchError(`apply planned ${JSON.stringify(plan.summary)}`);
          } finally {
            applied = true;
          }
        },
      );
      const beside = await (bystander as Promise<Bystander>);
      progress.done(
        `catalogue-file: beside the apply, another account's slowest write ${beside.slowestWriteMs.toFixed(0)} ms ` +
          `(${beside.writes}), uncached read ${beside.slowestReadMs.toFixed(0)} ms (${beside.reads}), failed ${JSON.stringify(beside.failed)}`,
      );
      let exported = '';
      let exportBytes = 0;
      const exportStep = await step(service, 'export', async () => {
        const response = await fetch(url, { headers: { 'x-api-key': key } });
        if (response.status !== 200 || !response.body)
          throw new BenchError(`GET ${url} answered ${response.status}`);
        const decoder = new TextDecoder();
        const chunks: string[] = [];
        for await (const chunk of response.body) {
          exportBytes += chunk.byteLength;
          chunks.push(decoder.decode(chunk, { stream: true }));
        }
        exported = chunks.join('');
      });
      const applyUnchanged = await step(service, 'apply the export again (an empty plan)', async () => {
        const plan = await post(`${url}/apply`, key, exported);
        const { create, change } = plan.summary;
        if (create !== 0 || change !== 0)
          throw new BenchError(`a second apply planned ${JSON.stringify(plan.summary)}`);
      });
      return {
        bundles: catalogueFileShape.bundles,
        priceRows,
        fileBytes: text.length,
        exportBytes,
        applyEmpty,
        bystander: beside,
        export: exportStep,
        applyUnchanged,
      };
    } finally {
      await service.stop();
    }
  } finally {
    delete process.env.CATALOGUE_BODY_LIMIT;
    delete process.env.REQUEST_TIMEOUT_MS;
    await database.drop();
  }
}
