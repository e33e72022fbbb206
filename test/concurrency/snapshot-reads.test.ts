import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { describeEachDatabase, otherInstance, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { flip, type WriterData } from './snapshot-writer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read freely
type Json = any;

const readersPerInstance = 2;
const readsPerReader = 500;

/** What one write of FLIP makes true at once: its list price, its override and its flag, all from the same n. */
function flipProblem(where: string, listPrice: unknown, adjustment: Json, flag: unknown): string | null {
  const n = listPrice as number;
  const whole =
    typeof n === 'number' &&
    adjustment?.type === 'override' &&
    adjustment.amount === n &&
    flag === (n % 2 === 0);
  return whole ? null : `${where}: listPrice ${n}, adjustment ${JSON.stringify(adjustment)}, flag ${flag}`;
}

// A writer in a thread of its own (snapshot-writer.ts) sets FLIP's listPrice n, its override n and
// allowUnitPriceEditing (n even) in one request, and adds products with their price, then deletes them (the
// product goes with its price), while readers on two other instances read details, searches and quotes. A read
// that mixes two commits shows a price with the flag of another write, or a product whose price was acknowledged
// before the read began, present without it.
describeEachDatabase('reads while prices, flags and products change', (ctx) => {
  let other: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    other = await otherInstance(ctx);
  });

  after(async () => {
    await other?.close();
  });

  test('every details, search and quote answer is one committed state', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: [
        {
          name: 'Flip',
          type: 'ADD_ON',
          configuration: { minCount: 0, maxCount: 5 },
          products: [{ productId: 'FLIP', properties: {} }],
        },
      ],
    });
    const [option] = options;
    const book = `/v1/pricebooks/${option.priceBookId}`;
    const first = await ctx.call('PUT', `${book}/prices`, { body: flip(1) });
    assert.equal(first.status, 200, first.text);

    /** Products X-k whose price write was acknowledged: from then on each is priced, or gone with its price. */
    const priced = new Set<string>();
    let newest: string | null = null;
    const data: WriterData = {
      databaseUrl: ctx.database.databaseUrl,
      sqlitePath: ctx.database.sqlitePath,
      key: ctx.key,
      bundleId: bundle.id,
      optionId: option.id,
      priceBookId: option.priceBookId,
    };
    const writer = new Worker(new URL('./snapshot-writer.ts', import.meta.url), { workerData: data });
    const writerDone = new Promise<string[]>((resolve, reject) => {
      writer.on('error', reject);
      writer.on('message', (message: { priced?: string; failures?: string[] }) => {
        if (message.priced !== undefined) {
          priced.add(message.priced);
          newest = message.priced;
        }
        if (message.failures !== undefined) resolve(message.failures);
      });
    });
    let readsLeft = 2 * readersPerInstance * readsPerReader;
    const problems: string[] = [];
    let reads = 0;

    const checkPriced = (where: string, pricedBefore: Set<string>, productId: string, price: unknown) => {
      if (pricedBefore.has(productId) && typeof price !== 'number') {
        problems.push(`${where}: ${productId} present without its price`);
      }
    };
    const reader = async (call: TestContext['call'], r: number) => {
      for (let i = 0; readsLeft > 0; i++, readsLeft--, reads++) {
        const pricedBefore = new Set(priced);
        const kind = (r + i) % 4;
        if (kind <= 1) {
          // Cached details, and built afresh for an instant.
          const query: Record<string, string> = { bundleIds: bundle.id };
          if (kind === 1) query.at = new Date().toISOString();
          const result = await call('GET', '/v1/bundles-details', { query });
          assert.equal(result.status, 200, result.text);
          for (const p of result.body.bundles[0].addOns[0].products as Json[]) {
            if (p.productId === 'FLIP') {
              const problem = flipProblem(
                'details',
                p.listPrice.USD,
                p.adjustments.USD,
                p.adjustments.USD?.allowUnitPriceEditing,
              );
              if (problem) problems.push(problem);
            } else {
              checkPriced('details', pricedBefore, p.productId, p.standardPrice.USD);
            }
          }
        } else if (kind === 2) {
          const result = await call('GET', `${book}/pricedProducts`, { query: { limit: '100' } });
          assert.equal(result.status, 200, result.text);
          for (const p of result.body.results as Json[]) {
            const usd = p.prices.USD;
            if (p.productId === 'FLIP') {
              const problem = flipProblem('search', usd?.listPrice, usd?.adjustment, p.allowUnitPriceEditing);
              if (problem) problems.push(problem);
            } else {
              checkPriced('search', pricedBefore, p.productId, usd?.standardPrice);
            }
          }
        } else {
          const chosen = newest !== null && i % 2 === 0 ? newest : 'FLIP';
          const body = {
            currency: 'USD',
            bundles: [
              {
                bundleId: bundle.id,
                options: [{ optionId: option.id, products: [{ productId: chosen, quantity: 1 }] }],
              },
            ],
          };
          const result = await call('POST', '/v1/quotes/price', { body });
          if (chosen === 'FLIP') {
            assert.equal(result.status, 200, result.text);
            const [line] = result.body.lines;
            const problem = flipProblem(
              'quote',
              line.listPrice,
              line.adjustment,
              line.adjustment?.allowUnitPriceEditing,
            );
            if (problem) problems.push(problem);
            if (line.unitPrice !== line.listPrice)
              problems.push(`quote: unit price ${line.unitPrice} of ${line.listPrice}`);
          } else if (result.status !== 200) {
            // The product may be gone by now; it was never present without its price.
            const codes = (result.body.errors as Json[]).map((e) => e.code);
            if (codes.includes('no_price') && pricedBefore.has(chosen))
              problems.push(`quote: ${chosen} no_price`);
          }
        }
      }
    };

    // The writer is under way before the reads start.
    while (newest === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all([
      ...[ctx.call, other.call].flatMap((call) =>
        Array.from({ length: readersPerInstance }, (_, r) => reader(call, r)),
      ),
    ]);
    writer.postMessage('stop');
    assert.deepEqual(await writerDone, [], 'every write succeeded');
    await writer.terminate();
    assert.ok(reads >= 2 * readersPerInstance * readsPerReader);
    assert.deepEqual(problems.slice(0, 5), [], `${problems.length} of ${reads} reads mixed two commits`);
  });
});
