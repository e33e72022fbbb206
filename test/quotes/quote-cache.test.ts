import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { connect, type DatabaseHandle } from '../../src/db/connect.ts';
import { callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';

// Instance A is the context's app; B is a second app with its own connection to the same database, as a second
// process would be. Quotes go through B, writes through A: B's cached catalogue must never price with old data.
describeEachDatabase('quote catalogue cache across instances', (ctx) => {
  let other: App;
  let handle: DatabaseHandle;
  let counted: ReturnType<typeof countingQueries>;

  before(async () => {
    handle = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    counted = countingQueries(handle.db);
    other = await buildApp({
      config: testConfig(),
      database: { ...handle, db: counted.db },
    });
  });

  after(async () => {
    await other?.close();
    await handle?.db.destroy();
  });

  test('B prices from its cache, and prices, rules and activity changed through A show at once', async () => {
    const { bundle, options } = await createBundle(ctx);
    const base = options[0];
    const book = `/v1/pricebooks/${base.priceBookId}`;
    const productId = base.products[0].productId;
    const write = async (method: 'PUT' | 'PATCH', url: string, body: unknown) => {
      const result = await ctx.call(method, url, { body });
      assert.ok(result.status < 300, `${method} ${url}: ${result.status} ${result.text}`);
    };
    await write('PUT', `${book}/prices`, [{ productId, currency: 'USD', standardPrice: 10 }]);
    const request = {
      currency: 'USD',
      bundles: [
        { bundleId: bundle.id, options: [{ optionId: base.id, products: [{ productId, quantity: 2 }] }] },
      ],
    };
    const quoteB = async () => {
      counted.take();
      const result = await callApp(other, ctx.key, 'POST', '/v1/quotes/price', { body: request });
      return { ...result, queries: counted.take() };
    };

    const first = await quoteB();
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.total, 20);
    const hit = await quoteB();
    assert.equal(hit.body.total, 20);
    assert.equal(hit.queries, 1, 'a hit is one statement: the stamps, with the key');
    assert.ok(first.queries > hit.queries);

    await write('PUT', `${book}/prices`, [{ productId, currency: 'USD', standardPrice: 12.5 }]);
    assert.equal((await quoteB()).body.total, 25, 'a new price');

    await write('PUT', `${book}/products/${productId}/adjustment?currency=USD`, {
      adjustment: { type: 'percent', amount: 10 },
    });
    assert.equal((await quoteB()).body.total, 22.5, 'a new adjustment');

    await write('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/${productId}`, {
      configuration: { maxQuantity: 1 },
    });
    const tooMany = await quoteB();
    assert.equal(tooMany.status, 422, 'a new quantity rule');
    assert.equal(tooMany.body.errors[0].code, 'quantity_above_max');

    await write('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/${productId}`, {
      configuration: { maxQuantity: null },
    });
    await write('PATCH', `/v1/bundles/${bundle.id}`, { isActive: false });
    const inactive = await quoteB();
    assert.equal(inactive.status, 422, 'an inactive bundle');
    assert.equal(inactive.body.errors[0].code, 'bundle_inactive');

    await write('PATCH', `/v1/bundles/${bundle.id}`, { isActive: true });
    await write('PATCH', book, { effectiveStartDate: new Date(Date.now() + 1500).toISOString() });
    const notYet = await quoteB();
    assert.equal(notYet.status, 422, 'a book not yet effective');
    assert.equal(notYet.body.errors[0].code, 'price_book_not_effective');
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const nowEffective = await quoteB();
    assert.equal(
      nowEffective.status,
      200,
      'the book became effective: the clock alone ends the cached entry',
    );
    assert.equal(nowEffective.body.total, 22.5);
  });
  test('a rule made, changed or deleted through A shows at once in quotes through B', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    for (const option of [base, extras]) {
      const result = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
        body: option.products.map((p: { productId: string }) => ({
          productId: p.productId,
          currency: 'USD',
          standardPrice: 10,
        })),
      });
      assert.equal(result.status, 200, result.text);
    }
    const request = {
      currency: 'USD',
      bundles: [
        {
          bundleId: bundle.id,
          options: [{ optionId: base.id, products: [{ productId: 'BASE-L', quantity: 1 }] }],
        },
      ],
    };
    const quoteB = () => callApp(other, ctx.key, 'POST', '/v1/quotes/price', { body: request });
    assert.equal((await quoteB()).status, 200);
    assert.equal((await quoteB()).status, 200, 'cached');

    const rules = `/v1/bundles/${bundle.id}/rules`;
    const body = {
      name: 'Large needs the warranty',
      kind: 'requires',
      when: { optionId: base.id, productId: 'BASE-L' },
      then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
      message: 'Add the warranty',
    };
    const made = await ctx.call('POST', rules, { body });
    assert.equal(made.status, 201, made.text);
    const broken = await quoteB();
    assert.equal(broken.status, 422, 'a new rule');
    assert.deepEqual(
      broken.body.errors.map((e: { code: string; ruleId: string; message: string }) => [
        e.code,
        e.ruleId,
        e.message,
      ]),
      [['rule_violated', made.body.id, 'Add the warranty']],
    );
    const off = await ctx.call('PUT', `${rules}/${made.body.id}`, { body: { ...body, isActive: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal((await quoteB()).status, 200, 'an inactive rule checks nothing');
    assert.equal((await ctx.call('PUT', `${rules}/${made.body.id}`, { body })).status, 200);
    assert.equal((await quoteB()).status, 422, 'active again');
    assert.equal((await ctx.call('DELETE', `${rules}/${made.body.id}`)).status, 204);
    assert.equal((await quoteB()).status, 200, 'a deleted rule');
  });
  test('a rule made, changed or deleted through A shows at once in configurations through B', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    const configureB = async () => {
      counted.take();
      const result = await callApp(other, ctx.key, 'POST', `/v1/bundles/${bundle.id}/configure`, {
        body: { selections: [{ optionId: base.id, productId: 'BASE-L' }] },
      });
      assert.equal(result.status, 200, result.text);
      const warranty = result.body.options[1].products.find(
        (p: { productId: string }) => p.productId === 'EXTRA-WARRANTY',
      );
      return { state: warranty.state, queries: counted.take() };
    };
    assert.equal((await configureB()).state, 'available');
    assert.deepEqual(await configureB(), { state: 'available', queries: 1 }, 'cached: one statement');

    const rules = `/v1/bundles/${bundle.id}/rules`;
    const body = {
      name: 'Large needs the warranty',
      kind: 'requires',
      when: { optionId: base.id, productId: 'BASE-L' },
      then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
    };
    const made = await ctx.call('POST', rules, { body });
    assert.equal(made.status, 201, made.text);
    assert.equal((await configureB()).state, 'required', 'a new rule');
    assert.deepEqual(await configureB(), { state: 'required', queries: 1 }, 'cached in turn');
    const off = await ctx.call('PUT', `${rules}/${made.body.id}`, { body: { ...body, isActive: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal((await configureB()).state, 'available', 'an inactive rule');
    assert.equal((await ctx.call('PUT', `${rules}/${made.body.id}`, { body })).status, 200);
    assert.equal((await configureB()).state, 'required', 'active again');
    assert.equal((await ctx.call('DELETE', `${rules}/${made.body.id}`)).status, 204);
    assert.equal((await configureB()).state, 'available', 'a deleted rule');
  });
});
