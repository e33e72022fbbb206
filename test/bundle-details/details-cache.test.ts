import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { getBundleDetails } from '../../src/bundle-details/bundle-details.service.ts';
import type { CachedDetails } from '../../src/bundle-details/details-answer.ts';
import { StampedCache } from '../../src/catalogue/stamped-cache.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { connect, type DatabaseHandle } from '../../src/db/connect.ts';
import { limitsOf, scopeOutsideHttp } from '../../src/shared/scope.ts';
import { type CallOptions, callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';

const missingId = 'bnd_01M7Z4FGHN62EHBXHK2BWGA38Q';

test('the cache keeps the most recently used answers within its bytes', () => {
  const entry = (bytes: number) => ({
    stamps: new Map([['bnd_x', '1.1']]),
    parts: [Buffer.alloc(bytes)],
    bytes,
    etag: '"x"',
    validUntil: Number.POSITIVE_INFINITY,
    weight: bytes,
  });
  const cache = new StampedCache<CachedDetails>(2_000);
  cache.set('a', entry(500));
  cache.set('b', entry(500));
  assert.equal(cache.size, 2);
  assert.ok(cache.get('a'), 'a is now the most recently used');
  cache.set('c', entry(500));
  assert.deepEqual(
    [cache.get('a') !== undefined, cache.get('b') !== undefined, cache.get('c') !== undefined],
    [true, false, true],
  );
  assert.ok(cache.bytes <= 2_000);
  cache.set('a', entry(5_000));
  assert.equal(cache.get('a'), undefined, 'an answer over the bound is not kept, and the old one is gone');
  cache.delete('c');
  assert.deepEqual([cache.size, cache.bytes], [0, 0]);
});

test('DETAILS_CACHE_BYTES sizes the cache; 0 turns it off', () => {
  assert.equal(loadConfig({}).detailsCacheBytes, 32 * 1024 * 1024);
  assert.equal(loadConfig({ DETAILS_CACHE_BYTES: '0' }).detailsCacheBytes, 0);
  assert.throws(() => loadConfig({ DETAILS_CACHE_BYTES: '-1' }), ConfigError);
  assert.throws(() => loadConfig({ DETAILS_CACHE_BYTES: 'lots' }), /DETAILS_CACHE_BYTES/);
});

// Instance A is the context's app; instance B is a second app with its own connection to the same database, as a
// second process would be. Reads go through B, writes through A: B's cache must never answer with what A changed.
describeEachDatabase('bundle details cache across instances', (ctx) => {
  let other: App;
  let uncached: App;
  let handle: DatabaseHandle;
  let counted: ReturnType<typeof countingQueries>;

  before(async () => {
    handle = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    counted = countingQueries(handle.db);
    const database = { ...handle, db: counted.db };
    other = await buildApp({ config: testConfig(), database });
    uncached = await buildApp({ config: testConfig({ detailsCacheBytes: 0 }), database });
  });

  after(async () => {
    await other?.close();
    await uncached?.close();
    await handle?.db.destroy();
  });

  /** Details through B, with the number of queries the request ran (a hit: one, the stamps with the key). */
  async function readB(query: Record<string, string>, options: CallOptions = {}, app = other) {
    counted.take();
    const result = await callApp(app, ctx.key, 'GET', '/v1/bundles-details', { ...options, query });
    return { ...result, queries: counted.take() };
  }

  const truth = async (query: Record<string, string>) =>
    JSON.parse(
      JSON.stringify(
        await getBundleDetails(scopeOutsideHttp(ctx.db, 'acme', limitsOf(ctx.config)), {
          bundleIds: query.bundleIds as string,
        }),
      ),
    );

  async function write(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
    const result = await ctx.call(method, url, body === undefined ? {} : { body });
    assert.ok(result.status < 300, `${method} ${url}: ${result.status} ${result.text}`);
    return result.body;
  }

  async function pricedBundle() {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    await write('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, [
      { productId: 'BASE-S', currency: 'USD', standardPrice: 10, adjustment: { type: 'percent', amount: 5 } },
      { productId: 'BASE-L', currency: 'EUR', listPrice: 20 },
    ]);
    await write('PUT', `/v1/pricebooks/${extras.priceBookId}/prices`, [
      { productId: 'EXTRA-WARRANTY', currency: 'USD', standardPrice: 99 },
    ]);
    return { bundle, base, extras };
  }

  test('B answers from its cache, and every kind of write through A shows through B at once', async () => {
    const { bundle, base, extras } = await pricedBundle();
    const query = { bundleIds: `${bundle.id},${missingId}` };
    const first = await readB(query);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, await truth(query));
    const hit = await readB(query);
    assert.equal(hit.queries, 1, 'a hit is one statement: the stamps, with the key');
    assert.ok(first.queries > hit.queries);
    assert.equal(hit.text, first.text);
    assert.equal(hit.headers.etag, first.headers.etag);

    const bundleUrl = `/v1/bundles/${bundle.id}`;
    const baseUrl = `${bundleUrl}/options/${base.id}`;
    const book = `/v1/pricebooks/${base.priceBookId}`;
    let replacement = '';
    const writes: [string, () => Promise<unknown>][] = [
      [
        'prices',
        () => write('PUT', `${book}/prices`, [{ productId: 'BASE-S', currency: 'USD', standardPrice: 11 }]),
      ],
      ['book ended', () => write('PATCH', book, { effectiveEndDate: '2020-01-01T00:00:00Z' })],
      ['book reopened', () => write('PATCH', book, { effectiveEndDate: null })],
      [
        'adjustment',
        () =>
          write('PUT', `${book}/products/BASE-L/adjustment?currency=EUR`, {
            adjustment: { type: 'override', amount: 7 },
          }),
      ],
      ['adjustment removed', () => write('DELETE', `${book}/products/BASE-L/adjustment?currency=EUR`)],
      ['entries removed', () => write('DELETE', `${book}/prices`, ['BASE-L'])],
      ['book deleted', () => write('DELETE', book)],
      [
        'product added',
        () => write('POST', `${baseUrl}/products`, [{ productId: 'BASE-XL', properties: { a: 'b' } }]),
      ],
      ['product changed', () => write('PUT', `${baseUrl}/products/BASE-XL`, { properties: { a: 'c' } })],
      ['product removed', () => write('DELETE', `${baseUrl}/BASE-S`)],
      ['option configured', () => write('PUT', baseUrl, { configuration: { minCount: 0 }, name: 'Renamed' })],
      [
        'option made',
        () => write('POST', `${bundleUrl}/options`, { name: 'Late', products: [{ productId: 'L' }] }),
      ],
      ['option deleted', () => write('DELETE', `${bundleUrl}/options/${extras.id}`)],
      ['bundle changed', () => write('PATCH', bundleUrl, { header: { productId: 'HDR-2', properties: {} } })],
      [
        'new current book',
        async () => {
          replacement = (await write('POST', '/v1/pricebooks', { bundleOptionId: base.id })).id;
          return write('PUT', `/v1/pricebooks/${replacement}/prices`, [
            { productId: 'BASE-XL', currency: 'JPY', standardPrice: 1000 },
          ]);
        },
      ],
      [
        'an id asked for that was missing now exists',
        () =>
          ctx.db
            .insertInto('bundles')
            .values({
              account_id: 'acme',
              id: missingId,
              is_active: true,
              header_product_id: 'LATE',
              header_properties: '{}',
              cloned_bundle_temp_name: null,
              version: 1,
              created_at: 'x',
              updated_at: 'x',
            })
            .execute(),
      ],
      ['bundle deleted', () => write('DELETE', bundleUrl)],
    ];
    let previous = hit.text;
    for (const [what, change] of writes) {
      await change();
      const after = await readB(query);
      assert.equal(after.status, 200, what);
      assert.deepEqual(after.body, await truth(query), what);
      assert.notEqual(after.text, previous, `${what} changes the answer`);
      assert.notEqual(after.headers.etag, hit.headers.etag, what);
      assert.equal((await readB(query)).queries, 1, `${what}: the new answer is cached in turn`);
      previous = after.text;
    }
    assert.deepEqual((await readB(query)).body.notFound, [bundle.id]);
  });

  test('a book that becomes effective (or ends) a moment later is served so from that moment', async () => {
    const { bundle, base, extras } = await pricedBundle();
    const query = { bundleIds: bundle.id };
    const boundary = new Date(Date.now() + 2_000).toISOString();
    await write('PATCH', `/v1/pricebooks/${base.priceBookId}`, { effectiveStartDate: boundary });
    await write('PATCH', `/v1/pricebooks/${extras.priceBookId}`, { effectiveEndDate: boundary });
    const prices = (body: { bundles: { included: unknown[]; addOns: unknown[] }[] }) => {
      const [details] = body.bundles as {
        included: { products: { standardPrice: object }[] }[];
        addOns: { products: { standardPrice: object }[] }[];
      }[];
      return {
        base: details?.included[0]?.products[0]?.standardPrice,
        extras: details?.addOns[0]?.products[0]?.standardPrice,
      };
    };
    const before = await readB(query);
    assert.deepEqual(prices(before.body), { base: {}, extras: { USD: 99 } });
    assert.equal((await readB(query)).queries, 1, 'cached until the boundary');
    await new Promise((resolve) => setTimeout(resolve, Date.parse(boundary) - Date.now() + 50));
    const after = await readB(query);
    assert.deepEqual(prices(after.body), { base: { USD: 10 }, extras: {} });
    assert.deepEqual(after.body, await truth(query));
  });

  test('answers for another instant, or with the cache off, are built every time', async () => {
    const { bundle } = await pricedBundle();
    const at = { bundleIds: bundle.id, at: '2030-01-01T00:00:00Z' };
    const first = await readB(at);
    const again = await readB(at);
    assert.equal(again.queries, first.queries);
    assert.ok(again.queries > 1);
    assert.equal(again.text, first.text);
    const query = { bundleIds: bundle.id };
    await readB(query, {}, uncached);
    assert.equal((await readB(query, {}, uncached)).queries, first.queries);
  });

  test('If-None-Match through B: 304 while the answer holds, 200 once A has changed it', async () => {
    const { bundle, base } = await pricedBundle();
    const query = { bundleIds: bundle.id, properties: 'size' };
    const full = await readB(query);
    const tag = full.headers.etag as string;
    const notModified = await readB(query, { headers: { 'if-none-match': tag } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
    await write('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, [
      { productId: 'BASE-L', currency: 'USD', standardPrice: 5 },
    ]);
    const changed = await readB(query, { headers: { 'if-none-match': tag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.etag, tag);
    assert.deepEqual(changed.body.bundles[0].included[0].products[1].standardPrice, { EUR: null, USD: 5 });
  });

  // B's requests for one bundle arrive together, as a load balancer's would: most share a stamp check (SharedReads)
  // while one is under way. A write through A lands in the middle of them, and the read sent through B once A has
  // answered must see it, however many checks B has under way or waiting.
  test('requests at once through B share stamp checks, and a write through A still shows at once', async () => {
    const { bundle, base } = await pricedBundle();
    const query = { bundleIds: bundle.id };
    const warm = await readB(query);
    const together = 40;
    for (let price = 1; price <= 5; price++) {
      counted.take();
      const crowd = Array.from({ length: together }, () =>
        callApp(other, ctx.key, 'GET', '/v1/bundles-details', { query }),
      );
      await write('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, [
        { productId: 'BASE-L', currency: 'USD', standardPrice: price },
      ]);
      const after = await callApp(other, ctx.key, 'GET', '/v1/bundles-details', { query });
      assert.deepEqual(after.body.bundles[0].included[0].products[1].standardPrice, {
        EUR: null,
        USD: price,
      });
      for (const read of await Promise.all(crowd)) assert.equal(read.status, 200);
      if (price === 1) {
        const statements = counted.take();
        assert.ok(statements < together, `${together + 1} requests, ${statements} statements`);
      }
    }
    assert.notEqual(warm.headers.etag, (await readB(query)).headers.etag);
  });
});
