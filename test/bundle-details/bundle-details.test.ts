import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { bundleDetailsBytes, getBundleDetails } from '../../src/bundle-details/bundle-details.service.ts';
import { connect } from '../../src/db/connect.ts';
import { bytesTag } from '../../src/shared/etags.ts';
import { limitsOf, scopeOutsideHttp } from '../../src/shared/scope.ts';
import { callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';
import { problemPointers } from '../price-books/support.ts';

describeEachDatabase('bundle details', (ctx) => {
  async function pricedBundle(key = ctx.key) {
    const made = await createBundle(ctx, {
      key,
      header: { productId: 'LAPTOP', properties: { family: 'Laptops', color: 'silver' } },
      options: [
        {
          name: 'Extras',
          type: 'ADD_ON',
          displayOrder: 5,
          products: [{ productId: 'BAG', properties: { color: 'black' } }],
        },
        {
          name: 'Memory',
          type: 'INCLUDED',
          displayOrder: 2,
          configuration: { minCount: 1, maxCount: 1 },
          products: [
            {
              productId: 'RAM-32',
              properties: { size: '32' },
              displayOrder: 1,
              configuration: { minQuantity: 1, maxQuantity: 2, readonlyQuantity: false },
            },
            { productId: 'RAM-16', properties: { size: '16', color: null }, displayOrder: 0 },
          ],
        },
        { name: 'Processor', type: 'INCLUDED', displayOrder: 1, products: [{ productId: 'CPU' }] },
      ],
    });
    const [extras, memory, processor] = made.options;
    const prices = await ctx.call('PUT', `/v1/pricebooks/${memory.priceBookId}/prices`, {
      key,
      body: [
        {
          productId: 'RAM-16',
          currency: 'USD',
          standardPrice: 80,
          listPrice: 99.99,
          adjustment: { type: 'percent', amount: 10 },
          allowUnitPriceEditing: true,
        },
        { productId: 'RAM-16', currency: 'JPY', standardPrice: 12000 },
        { productId: 'RAM-32', currency: 'EUR', listPrice: 150.5 },
      ],
    });
    assert.equal(prices.status, 200);
    return { ...made, extras, memory, processor };
  }

  const details = (query: Record<string, string>, key = ctx.key) =>
    ctx.call('GET', '/v1/bundles-details', { query, key });

  test('answers header, options by kind and order, products with prices keyed by currency', async () => {
    const { bundle, extras, memory, processor } = await pricedBundle();
    const res = await details({ bundleIds: bundle.id });
    assert.equal(res.status, 200);
    const ram = (productId: string) =>
      memory.products.find((p: { productId: string }) => p.productId === productId);
    assert.deepEqual(res.body, {
      bundles: [
        {
          id: bundle.id,
          isActive: true,
          header: { productId: 'LAPTOP', properties: { family: 'Laptops', color: 'silver' } },
          included: [
            {
              id: processor.id,
              name: 'Processor',
              displayOrder: 1,
              configuration: { minCount: null, maxCount: null, defaultOptionProductId: null },
              products: [
                {
                  id: processor.products[0].id,
                  productId: 'CPU',
                  properties: {},
                  configuration: { minQuantity: null, maxQuantity: null, readonlyQuantity: null },
                  displayOrder: 0,
                  adjustments: {},
                  standardPrice: {},
                  listPrice: {},
                },
              ],
            },
            {
              id: memory.id,
              name: 'Memory',
              displayOrder: 2,
              configuration: { minCount: 1, maxCount: 1, defaultOptionProductId: null },
              products: [
                {
                  id: ram('RAM-16').id,
                  productId: 'RAM-16',
                  properties: { size: '16', color: null },
                  configuration: { minQuantity: null, maxQuantity: null, readonlyQuantity: null },
                  displayOrder: 0,
                  adjustments: {
                    JPY: null,
                    USD: { type: 'percent', amount: 10, allowUnitPriceEditing: true },
                  },
                  standardPrice: { JPY: 12000, USD: 80 },
                  listPrice: { JPY: null, USD: 99.99 },
                },
                {
                  id: ram('RAM-32').id,
                  productId: 'RAM-32',
                  properties: { size: '32' },
                  configuration: { minQuantity: 1, maxQuantity: 2, readonlyQuantity: false },
                  displayOrder: 1,
                  adjustments: { EUR: null },
                  standardPrice: { EUR: null },
                  listPrice: { EUR: 150.5 },
                },
              ],
            },
          ],
          addOns: [
            {
              id: extras.id,
              name: 'Extras',
              displayOrder: 5,
              configuration: { minCount: null, maxCount: null, defaultOptionProductId: null },
              products: [
                {
                  id: extras.products[0].id,
                  productId: 'BAG',
                  properties: { color: 'black' },
                  configuration: { minQuantity: null, maxQuantity: null, readonlyQuantity: null },
                  displayOrder: 0,
                  adjustments: {},
                  standardPrice: {},
                  listPrice: {},
                },
              ],
            },
          ],
        },
      ],
      notFound: [],
    });
  });

  test('bundles come in the order asked, once each; unknown and other accounts’ ids in notFound', async () => {
    const first = (await createBundle(ctx)).bundle;
    const second = (await createBundle(ctx, { isActive: false })).bundle;
    const foreign = (await createBundle(ctx, { key: await ctx.newKey('other') })).bundle;
    const res = await details({
      bundleIds: ` ${second.id}, bnd_unknown,${first.id},${foreign.id},${second.id}`,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.bundles.map((b: { id: string; isActive: boolean }) => [b.id, b.isActive]),
      [
        [second.id, false],
        [first.id, true],
      ],
    );
    assert.deepEqual(res.body.notFound, ['bnd_unknown', foreign.id]);
    const none = await details({ bundleIds: 'bnd_unknown' });
    assert.deepEqual(none.body, { bundles: [], notFound: ['bnd_unknown'] });
  });

  test('options and products with the same displayOrder are ordered by id', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: ['B', 'A', 'C'].map((name) => ({
        name,
        type: 'INCLUDED' as const,
        displayOrder: 0,
        products: ['P2', 'P1'].map((productId) => ({ productId, displayOrder: 3 })),
      })),
    });
    const res = await details({ bundleIds: bundle.id });
    const included = res.body.bundles[0].included;
    assert.deepEqual(
      included.map((o: { id: string }) => o.id),
      options.map((o) => o.id as string).sort(),
    );
    for (const option of included) {
      const ids = option.products.map((p: { id: string }) => p.id);
      assert.deepEqual(ids, [...ids].sort());
    }
    assert.deepEqual(res.body.bundles[0].addOns, []);
  });

  test('properties: exactly the keys asked, null where missing, on header and products', async () => {
    const { bundle } = await pricedBundle();
    const res = await details({ bundleIds: bundle.id, properties: 'color, size,color,' });
    const [found] = res.body.bundles;
    assert.deepEqual(found.header.properties, { color: 'silver', size: null });
    const products = [...found.included, ...found.addOns].flatMap((o) => o.products);
    assert.deepEqual(
      products.map((p: { productId: string; properties: unknown }) => [p.productId, p.properties]),
      [
        ['CPU', { color: null, size: null }],
        ['RAM-16', { color: null, size: '16' }],
        ['RAM-32', { color: null, size: '32' }],
        ['BAG', { color: 'black', size: null }],
      ],
    );
    const tricky = await details({ bundleIds: bundle.id, properties: '__proto__,constructor' });
    assert.equal(
      tricky.text.includes(
        '"header":{"productId":"LAPTOP","properties":{"__proto__":null,"constructor":null}}',
      ),
      true,
    );
    const empty = await details({ bundleIds: bundle.id, properties: '' });
    assert.deepEqual(empty.body.bundles[0].header.properties, {});
  });

  test('prices only from a book effective at `at`: start inclusive, end exclusive', async () => {
    const { bundle, memory } = await pricedBundle();
    const patch = await ctx.call('PATCH', `/v1/pricebooks/${memory.priceBookId}`, {
      body: { effectiveStartDate: '2025-01-01T00:00:00Z', effectiveEndDate: '2025-02-01T00:00:00Z' },
    });
    assert.equal(patch.status, 200);
    const usdAt = async (at?: string) => {
      const res = await details(at === undefined ? { bundleIds: bundle.id } : { bundleIds: bundle.id, at });
      assert.equal(res.status, 200);
      return res.body.bundles[0].included[1].products[0].standardPrice.USD;
    };
    assert.equal(await usdAt('2024-12-31T23:59:59.999Z'), undefined);
    assert.equal(await usdAt('2025-01-01T00:00:00.000Z'), 80);
    assert.equal(await usdAt('2025-01-01T01:00:00+01:00'), 80, 'an offset is the same instant');
    assert.equal(await usdAt('2025-01-31T23:59:59.999Z'), 80);
    assert.equal(await usdAt('2025-02-01T00:00:00.000Z'), undefined);
    assert.equal(await usdAt(), undefined, 'now is after the end');
    await ctx.call('PATCH', `/v1/pricebooks/${memory.priceBookId}`, { body: { effectiveEndDate: null } });
    assert.equal(await usdAt(), 80);
  });

  test('a deleted book is not served; a new current book replaces the old one', async () => {
    const { bundle, memory } = await pricedBundle();
    await ctx.call('DELETE', `/v1/pricebooks/${memory.priceBookId}`);
    const memoryOf = async () => (await details({ bundleIds: bundle.id })).body.bundles[0].included[1];
    for (const product of (await memoryOf()).products) {
      assert.deepEqual([product.adjustments, product.standardPrice, product.listPrice], [{}, {}, {}]);
    }
    const made = await ctx.call('POST', '/v1/pricebooks', { body: { bundleOptionId: memory.id } });
    await ctx.call('PUT', `/v1/pricebooks/${made.body.id}/prices`, {
      body: [{ productId: 'RAM-32', currency: 'GBP', standardPrice: 120 }],
    });
    const [ram16, ram32] = (await memoryOf()).products;
    assert.deepEqual(ram16.standardPrice, {});
    assert.deepEqual(ram32.standardPrice, { GBP: 120 });
  });

  test('bad queries are 400 with a pointer into the query; no key is 401', async () => {
    const { bundle } = await createBundle(ctx);
    const tooMany = Array.from({ length: 101 }, (_, i) => `bnd_${i}`).join(',');
    const hundred = Array.from({ length: 99 }, (_, i) => `bnd_${i}`)
      .concat(bundle.id)
      .join(',');
    assert.equal((await details({ bundleIds: hundred })).status, 200);
    for (const [query, at] of [
      [{}, '/bundleIds'],
      [{ bundleIds: '' }, '/bundleIds'],
      [{ bundleIds: `${bundle.id},,bnd_x` }, '/bundleIds'],
      [{ bundleIds: tooMany }, '/bundleIds'],
      [{ bundleIds: bundle.id, at: 'yesterday' }, '/at'],
      [{ bundleIds: bundle.id, at: '2024-12-31T23:59:60Z' }, '/at'],
    ] as const) {
      const res = await details(query);
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.equal(res.body.code, 'validation_failed');
      assert.deepEqual(problemPointers(res.body), [at]);
      assert.equal(res.body.errors[0].in, 'query');
    }
    assert.equal((await details({ bundleIds: bundle.id }, null as unknown as string)).status, 401);
  });

  test('loads with the same few queries whatever the number of bundles that fit one round', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await pricedBundle()).bundle.id);
    const counted = countingQueries(ctx.db);
    const count = async (bundleIds: string[]) => {
      counted.take();
      const answer = await getBundleDetails(scopeOutsideHttp(counted.db, 'acme', limitsOf(ctx.config)), {
        bundleIds: bundleIds.join(','),
      });
      assert.equal(answer.bundles.length, bundleIds.length);
      return counted.take();
    };
    assert.equal(await count(ids.slice(0, 1)), 4);
    // Several bundles: a count of their products first, to plan the rounds.
    assert.equal(await count(ids.slice(0, 2)), 5);
    assert.equal(await count(ids), 5);
  });

  /** A bundle of one option of `products` products, each with a property naming it. */
  async function bundleOf(products: number) {
    const { bundle, options } = await createBundle(ctx, {
      options: [
        {
          name: 'Many',
          type: 'ADD_ON',
          products: Array.from({ length: products }, (_, i) => ({
            productId: `P-${i}`,
            properties: { name: `product ${i}` },
          })),
        },
      ],
    });
    return { bundle, option: options[0] };
  }

  // Past 300 products, bundles are read in rounds (bundle-details.service.ts): these four take one each.
  const largeBundles = async () => Promise.all([160, 160, 160, 160].map(bundleOf));

  test('bundles read in rounds answer what each answers alone, in the order asked', async () => {
    const large = await largeBundles();
    const ids = [...large.map((l) => l.bundle.id), 'missing'].reverse();
    const whole = await details({ bundleIds: ids.join(','), properties: 'name' });
    assert.equal(whole.status, 200, whole.text);
    const alone = [];
    for (const id of ids.slice(1)) {
      alone.push((await details({ bundleIds: id, properties: 'name' })).body.bundles[0]);
    }
    assert.deepEqual(whole.body, { bundles: alone, notFound: ['missing'] });
    assert.equal(whole.text, JSON.stringify(whole.body));
    assert.equal(whole.headers.etag, bytesTag(whole.text));
  });

  /**
   * The database as another connection sees it while it renames the product `productId` the first time a round has
   * read the bundles: the round after starts after the write. `bundleReads` counts the reads of bundles.
   */
  function renamingAfterFirstRead(productId: string) {
    const writer = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    const reads = { bundleReads: 0 };
    const afterFirstRead: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        if (result.rows[0] && 'header_properties' in result.rows[0] && ++reads.bundleReads === 1) {
          await writer.db
            .updateTable('option_products')
            .set({ properties: JSON.stringify({ name: 'renamed' }) })
            .where('account_id', '=', 'acme')
            .where('id', '=', productId)
            .execute();
        }
        return result;
      },
    };
    return { db: ctx.db.withPlugin(afterFirstRead), reads, close: () => writer.db.destroy() };
  }

  test('a bundle written between two rounds is read again: the answer is one committed state', async () => {
    const large = await largeBundles();
    const ids = large.map((l) => l.bundle.id);
    const [first] = large;
    // Without the stamp check the answer would hold the first bundle as it was.
    const renaming = renamingAfterFirstRead(first?.option.products[0].id as string);
    try {
      const answer = await getBundleDetails(scopeOutsideHttp(renaming.db, 'acme', limitsOf(ctx.config)), {
        bundleIds: ids.join(','),
      });
      const { bundleReads } = renaming.reads;
      assert.ok(bundleReads > ids.length, `${bundleReads} reads of bundles: the rounds ran again`);
      assert.deepEqual(answer.bundles[0]?.addOns[0]?.products[0]?.properties, { name: 'renamed' });
      const now = await details({ bundleIds: ids.join(','), at: new Date().toISOString() });
      assert.deepEqual(JSON.parse(JSON.stringify(answer)), now.body);
    } finally {
      await renaming.close();
    }
  });

  test('an answer built in rounds keeps nothing of a reading given up', async () => {
    const large = await largeBundles();
    const ids = large.map((l) => l.bundle.id);
    const query = { bundleIds: ids.join(','), at: new Date().toISOString() };
    const renaming = renamingAfterFirstRead(large[0]?.option.products[0].id as string);
    try {
      const scope = scopeOutsideHttp(renaming.db, 'acme', limitsOf(ctx.config));
      const written = await bundleDetailsBytes(scope, { query, cache: null });
      assert.ok(renaming.reads.bundleReads > ids.length, 'the rounds ran again');
      const plain = await details(query);
      assert.equal(Buffer.concat(written.parts).toString('utf8'), plain.text);
      assert.equal(written.etag, bytesTag(plain.text));
      assert.equal(plain.body.bundles[0].addOns[0].products[0].properties.name, 'renamed');
    } finally {
      await renaming.close();
    }
  });

  test('an answer not kept goes out as it is built: over a megabyte in parts with its length, compressed where asked', async () => {
    const blob = 'x'.repeat(6000);
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const products = Array.from({ length: 100 }, (_, i) => ({ productId: `B-${i}`, properties: { blob } }));
      ids.push((await createBundle(ctx, { options: [{ name: 'Big', type: 'ADD_ON', products }] })).bundle.id);
    }
    const at = new Date().toISOString();
    const url = `/v1/bundles-details?bundleIds=${ids.join(',')}&at=${encodeURIComponent(at)}`;
    const get = (headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
      ctx.app.inject({ method, url, headers: { 'x-api-key': ctx.key, ...headers } });

    const plain = await get();
    assert.equal(plain.statusCode, 200);
    const bytes = plain.rawPayload.byteLength;
    assert.ok(bytes > 1 << 20, `${bytes} bytes`);
    assert.equal(plain.headers['content-length'], String(bytes));
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    const tag = String(plain.headers.etag);
    assert.equal(tag, bytesTag(plain.rawPayload));
    const built = await getBundleDetails(scopeOutsideHttp(ctx.db, 'acme', limitsOf(ctx.config)), {
      bundleIds: ids.join(','),
      at,
    });
    assert.equal(plain.body, JSON.stringify(built));

    for (const [coding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const encoded = await get({ 'accept-encoding': coding });
      assert.equal(encoded.headers['content-encoding'], coding);
      assert.equal(encoded.headers['content-length'], String(encoded.rawPayload.byteLength));
      assert.ok(encoded.rawPayload.byteLength < bytes / 10, `${encoded.rawPayload.byteLength} bytes`);
      assert.deepEqual(decode(encoded.rawPayload), plain.rawPayload);
      assert.equal(encoded.headers.etag, `${tag.slice(0, -1)};${coding}"`);
    }
    const head = await get({}, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(bytes));
    assert.equal(head.rawPayload.byteLength, 0);
    assert.equal((await get({ 'if-none-match': tag })).statusCode, 304);

    // Kept (no `at`): the parts stay in the cache, and every hit sends them all, plain or compressed once.
    const kept = `/v1/bundles-details?bundleIds=${ids.join(',')}`;
    const keptGet = (headers: Record<string, string> = {}) =>
      ctx.app.inject({ method: 'GET', url: kept, headers: { 'x-api-key': ctx.key, ...headers } });
    const now = JSON.stringify(
      await getBundleDetails(scopeOutsideHttp(ctx.db, 'acme', limitsOf(ctx.config)), {
        bundleIds: ids.join(','),
      }),
    );
    for (let hit = 0; hit < 2; hit++) {
      const answer = await keptGet();
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.body, now, `request ${hit + 1}`);
      assert.equal(answer.headers['content-length'], String(answer.rawPayload.byteLength));
      const br = await keptGet({ 'accept-encoding': 'br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), now, `br ${hit + 1}`);
    }
  });

  test('/healthz is answered between the rounds of a large answer', async () => {
    const large = await largeBundles();
    const counted = countingQueries(ctx.db);
    let queries = 0;
    const app = await buildApp({
      config: testConfig({ detailsCacheBytes: 0 }),
      database: { ...ctx.database.handle, db: counted.db },
    });
    try {
      let built = false;
      const heavy = callApp(app, ctx.key, 'GET', '/v1/bundles-details', {
        query: { bundleIds: large.map((l) => l.bundle.id).join(',') },
      }).then((result) => {
        built = true;
        return result;
      });
      // The key, the product count and the first round's first query: the build is under way.
      for (queries += counted.take(); queries < 3; queries += counted.take()) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      const health = await callApp(app, ctx.key, 'GET', '/healthz');
      assert.equal(health.status, 200);
      assert.equal(built, false, '/healthz waited for the whole answer');
      assert.equal((await heavy).status, 200);
    } finally {
      await app.close();
    }
  });
});
