// The round trip and idempotence properties of catalogue files, for npm test's committed seeds and npm run fuzz's
// new ones: a random file applied into an empty account, exported, applied into another empty account and
// exported again gives the same file; details and quotes of the two accounts agree, ids aside; and applying a file
// a second time plans nothing.
import assert from 'node:assert/strict';
import type { TestContext } from '../helpers/app.ts';
import { randomCatalogue } from './random-catalogue.ts';

type Call = TestContext['call'];
/** What the properties need of a test context: calls, and keys of new accounts. */
export type Accounts = Pick<TestContext, 'call' | 'newKey'>;

const idPattern = /\b(bnd|opt|opp|pb|rul|evt)_[0-9A-HJKMNP-TV-Z]{26}\b/g;

/** An answer with every id replaced, and the instants records were made at and request ids removed. */
export function withoutIds(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(idPattern, '$1_ID'), (name, v) =>
    name === 'createdAt' || name === 'updatedAt' || name === 'requestId' ? undefined : v,
  );
}

export async function exportText(call: Call, key: string): Promise<string> {
  const result = await call('GET', '/v1/catalogue', { key });
  assert.equal(result.status, 200, result.text.slice(0, 500));
  return result.text;
}

export async function apply(call: Call, key: string, file: unknown, query = '') {
  const result = await call('POST', `/v1/catalogue/apply${query}`, { key, body: file });
  assert.equal(result.status, 200, result.text.slice(0, 2000));
  return result.body;
}

/** Each bundle's details and a quote of its first products, keyed by the bundle's place in the export. */
async function answers(call: Call, key: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let nextKey: string | undefined;
  const ids: string[] = [];
  do {
    const page = await call('GET', `/v1/bundles?limit=100${nextKey ? `&nextKey=${nextKey}` : ''}`, { key });
    ids.push(...page.body.bundles.map((b: { id: string }) => b.id));
    nextKey = page.body.nextKey;
  } while (nextKey);
  for (const id of ids) {
    const details = await call('GET', `/v1/bundles-details?bundleIds=${id}&at=2026-06-01T00:00:00.000Z`, {
      key,
    });
    const bundle = details.body.bundles[0];
    const options = [...bundle.included, ...bundle.addOns].filter(
      (o: { products: unknown[] }) => o.products.length > 0,
    );
    const quotes = [];
    for (const currency of ['USD', 'JPY']) {
      const quote = await call('POST', '/v1/quotes/price', {
        key,
        body: {
          currency,
          at: '2026-06-01T00:00:00.000Z',
          bundles: [
            {
              bundleId: id,
              options: options.map((o: { id: string; products: { productId: string }[] }) => ({
                optionId: o.id,
                products: [{ productId: o.products[0]?.productId, quantity: 1 }],
              })),
            },
          ],
        },
      });
      quotes.push({ status: quote.status, body: withoutIds(quote.body) });
    }
    out.push({ details: withoutIds(details.body), quotes });
  }
  return out;
}

/** One seed's round trip on the context's database, in two accounts of its own. */
export async function roundTrip(ctx: Accounts, seed: number): Promise<void> {
  const file = randomCatalogue(seed);
  const [a, b] = [await ctx.newKey(`rt-${seed}-a`), await ctx.newKey(`rt-${seed}-b`)];
  const first = await apply(ctx.call, a, file);
  assert.equal(first.summary.create, file.bundles.length, `seed ${seed}`);
  const exported = await exportText(ctx.call, a);
  assert.deepEqual(
    (await apply(ctx.call, a, file)).summary,
    { create: 0, change: 0, delete: 0 },
    `seed ${seed}: second apply`,
  );
  assert.deepEqual(
    (await apply(ctx.call, a, JSON.parse(exported), '?prune=true')).summary,
    { create: 0, change: 0, delete: 0 },
    `seed ${seed}: the export applied to its own account`,
  );
  await apply(ctx.call, b, JSON.parse(exported));
  assert.equal(await exportText(ctx.call, b), exported, `seed ${seed}: export of the copy`);
  assert.deepEqual(
    await answers(ctx.call, b),
    await answers(ctx.call, a),
    `seed ${seed}: details and quotes`,
  );
}

/**
 * One seed's change property: an account holding one random file, given another with prune, ends up as the other
 * file says: applying that file again plans nothing, and the account's export, planned against an account made
 * from the second file alone, plans nothing either.
 */
export async function changeTrip(ctx: Accounts, seed: number): Promise<void> {
  const [before, after] = [randomCatalogue(seed), randomCatalogue(seed + 1)];
  const [c, d] = [await ctx.newKey(`ct-${seed}-c`), await ctx.newKey(`ct-${seed}-d`)];
  await apply(ctx.call, c, before);
  const empty = { create: 0, change: 0, delete: 0 };
  assert.notDeepEqual(
    (await apply(ctx.call, c, after, '?prune=true')).summary,
    empty,
    `seed ${seed}: a change`,
  );
  assert.deepEqual((await apply(ctx.call, c, after, '?prune=true')).summary, empty, `seed ${seed}: again`);
  await apply(ctx.call, d, after);
  const plan = await apply(ctx.call, d, JSON.parse(await exportText(ctx.call, c)), '?prune=true&dryRun=true');
  assert.deepEqual(plan.changes, [], `seed ${seed}: the changed account against a fresh one`);
}
