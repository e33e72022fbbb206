import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Account, authenticate, KnownKeys } from '../../src/keys/keys.service.ts';
import { putPrices, searchPricedProducts } from '../../src/price-books/price-books.service.ts';
import { makeScope, scopeOutsideHttp } from '../../src/shared/scope.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';
import { problemPointers, storedEntries } from './support.ts';

const volume = {
  type: 'volume',
  tiers: [
    { firstUnit: 1, lastUnit: 9, unitPrice: 10 },
    { firstUnit: 10, lastUnit: null, unitPrice: 8.5 },
  ],
};

describeEachDatabase('price book entries', (ctx) => {
  async function book(key = ctx.key) {
    const { options } = await createBundle(ctx, { key });
    return { option: options[0], other: options[1], url: `/v1/pricebooks/${options[0].priceBookId}` };
  }

  test('PUT prices upserts and answers each written product’s whole entry', async () => {
    const { option, url } = await book();
    const res = await ctx.call('PUT', `${url}/prices`, {
      body: [
        { productId: 'BASE-S', currency: 'USD', standardPrice: 100.5, listPrice: 120, adjustment: volume },
        { productId: 'BASE-L', currency: 'JPY', standardPrice: 15000, allowUnitPriceEditing: true },
        {
          productId: 'BASE-S',
          currency: 'EUR',
          listPrice: 0.000001,
          adjustment: { type: 'percent', amount: -2.5, allowUnitPriceEditing: true },
        },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      entries: [
        {
          productId: 'BASE-S',
          allowUnitPriceEditing: true,
          properties: { size: 'S', color: null },
          prices: {
            EUR: {
              standardPrice: null,
              listPrice: 0.000001,
              adjustment: { type: 'percent', amount: -2.5, allowUnitPriceEditing: true },
            },
            USD: {
              standardPrice: 100.5,
              listPrice: 120,
              adjustment: { ...volume, allowUnitPriceEditing: true },
            },
          },
        },
        {
          productId: 'BASE-L',
          allowUnitPriceEditing: true,
          properties: { size: 'L' },
          prices: { JPY: { standardPrice: 15000, listPrice: null, adjustment: null } },
        },
      ],
    });
    const stored = await storedEntries(ctx, option.priceBookId);
    assert.deepEqual(stored.entries, [
      { product_id: 'BASE-L', allow_unit_price_editing: true },
      { product_id: 'BASE-S', allow_unit_price_editing: true },
    ]);
    const eur = stored.prices.find((p) => p.product_id === 'BASE-S' && p.currency === 'EUR');
    assert.equal(eur?.list_price, '0.000001', 'money is stored as exact decimal text');
    assert.deepEqual(
      JSON.parse(eur?.adjustment ?? ''),
      { type: 'percent', amount: -2.5 },
      'the flag is not stored',
    );
  });

  test('fields left out keep their value; null clears', async () => {
    const { url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [
        {
          productId: 'BASE-S',
          currency: 'USD',
          standardPrice: 10,
          listPrice: 12,
          adjustment: { type: 'override', amount: 9 },
          allowUnitPriceEditing: true,
        },
      ],
    });
    const res = await ctx.call('PUT', `${url}/prices`, {
      body: [{ productId: 'BASE-S', currency: 'USD', listPrice: null }],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.entries[0].prices, {
      USD: {
        standardPrice: 10,
        listPrice: null,
        adjustment: { type: 'override', amount: 9, allowUnitPriceEditing: true },
      },
    });
    assert.equal(res.body.entries[0].allowUnitPriceEditing, true);
    const cleared = await ctx.call('PUT', `${url}/prices`, {
      body: [{ productId: 'BASE-S', currency: 'USD', adjustment: null, allowUnitPriceEditing: false }],
    });
    assert.deepEqual(cleared.body.entries[0], {
      productId: 'BASE-S',
      allowUnitPriceEditing: false,
      properties: { size: 'S', color: null },
      prices: { USD: { standardPrice: 10, listPrice: null, adjustment: null } },
    });
  });

  test('all or nothing: one bad element and nothing is written', async () => {
    const { option, url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: 1 }],
    });
    const before = await storedEntries(ctx, option.priceBookId);
    const cases: { body: unknown[]; status: number; code: string; pointers: string[] }[] = [
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 2 },
          { productId: 'BASE-L', currency: 'USD', standardPrice: 2 },
          { productId: 'BASE-L', currency: 'EUR', standardPrice: 2 },
          { productId: 'EXTRA-WARRANTY', currency: 'USD', standardPrice: 2 },
        ],
        status: 422,
        code: 'unknown_reference',
        pointers: ['/3/productId'],
      },
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 2 },
          { productId: 'BASE-L', currency: 'XXY', standardPrice: 2 },
        ],
        status: 400,
        code: 'validation_failed',
        pointers: ['/1/currency'],
      },
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 2 },
          { productId: 'BASE-L', currency: 'USD', listPrice: 1.0000001 },
        ],
        status: 400,
        code: 'validation_failed',
        pointers: ['/1/listPrice'],
      },
      {
        body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: -1 }],
        status: 400,
        code: 'validation_failed',
        pointers: ['/0/standardPrice'],
      },
      {
        body: [{ productId: 'BASE-S', currency: 'USD', adjustment: { type: 'override', amount: 1.1234567 } }],
        status: 400,
        code: 'validation_failed',
        pointers: ['/0/adjustment/amount'],
      },
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 2 },
          {
            productId: 'BASE-L',
            currency: 'USD',
            adjustment: {
              type: 'volume',
              tiers: [
                { firstUnit: 0, lastUnit: 4, unitPrice: 1 },
                { firstUnit: 6, unitPrice: 1 },
              ],
            },
          },
        ],
        status: 422,
        code: 'rule_violation',
        pointers: ['/1/adjustment/tiers/1/firstUnit'],
      },
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 2 },
          { productId: 'BASE-S', currency: 'USD', listPrice: 2 },
        ],
        status: 422,
        code: 'rule_violation',
        pointers: ['/1'],
      },
      {
        body: [
          { productId: 'BASE-S', currency: 'USD', allowUnitPriceEditing: true },
          {
            productId: 'BASE-S',
            currency: 'EUR',
            adjustment: { type: 'override', amount: 1, allowUnitPriceEditing: false },
          },
        ],
        status: 422,
        code: 'rule_violation',
        pointers: ['/1/adjustment/allowUnitPriceEditing'],
      },
      { body: [], status: 400, code: 'validation_failed', pointers: [''] },
      {
        body: [{ productId: 'BASE-S', currency: 'USD', price: 1 }],
        status: 400,
        code: 'validation_failed',
        pointers: ['/0/price'],
      },
    ];
    for (const { body, status, code, pointers } of cases) {
      const res = await ctx.call('PUT', `${url}/prices`, { body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.code, code, JSON.stringify(body));
      assert.deepEqual(problemPointers(res.body), pointers, JSON.stringify(body));
    }
    assert.deepEqual(await storedEntries(ctx, option.priceBookId), before);
  });

  test('PUT prices answers from what it read and wrote, reading nothing twice', async () => {
    const { option } = await book();
    const counted = countingQueries(ctx.db);
    const write = (currency: string) =>
      putPrices(scopeOutsideHttp(counted.db, 'acme'), {
        id: option.priceBookId,
        body: [
          { productId: 'BASE-S', currency, listPrice: 5 },
          { productId: 'BASE-L', currency, standardPrice: 7 },
        ],
        expected: null,
      });
    await write('USD');
    counted.take();
    const { value } = await write('EUR');
    // Lock the bundle and the book; read products, entries and prices; write entries and prices; then the event
    // (PostgreSQL takes its ordering lock in one statement more).
    assert.equal(counted.take(), ctx.dialect === 'postgres' ? 10 : 9);
    assert.deepEqual(
      value.map((p) => [p.productId, Object.keys(p.prices)]),
      [
        ['BASE-S', ['EUR', 'USD']],
        ['BASE-L', ['EUR', 'USD']],
      ],
    );
  });

  test('PUT prices on an unknown book is 404, on a deleted one 409', async () => {
    const { url } = await book();
    const body = [{ productId: 'BASE-S', currency: 'USD', standardPrice: 1 }];
    assert.equal((await ctx.call('PUT', '/v1/pricebooks/pb_nothing/prices', { body })).status, 404);
    await ctx.call('DELETE', url);
    const res = await ctx.call('PUT', `${url}/prices`, { body });
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'conflict');
  });

  test('DELETE prices removes every currency of the products named', async () => {
    const { option, url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [
        { productId: 'BASE-S', currency: 'USD', standardPrice: 1 },
        { productId: 'BASE-S', currency: 'EUR', standardPrice: 1 },
        { productId: 'BASE-L', currency: 'USD', standardPrice: 2 },
      ],
    });
    const res = await ctx.call('DELETE', `${url}/prices`, {
      body: ['BASE-S', 'NOT-THERE', 'BASE-S', 'EXTRA-SETUP'],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { deleted: ['BASE-S'], notFound: ['NOT-THERE', 'EXTRA-SETUP'] });
    const stored = await storedEntries(ctx, option.priceBookId);
    assert.deepEqual(
      stored.prices.map((p) => [p.product_id, p.currency]),
      [['BASE-L', 'USD']],
    );
    assert.equal((await ctx.call('DELETE', `${url}/prices`, { body: [] })).status, 400);
    assert.equal((await ctx.call('DELETE', `${url}/prices`, { body: [7] })).status, 400);
    assert.equal((await ctx.call('DELETE', '/v1/pricebooks/pb_nothing/prices', { body: ['x'] })).status, 404);
    await ctx.call('DELETE', url);
    assert.equal((await ctx.call('DELETE', `${url}/prices`, { body: ['BASE-L'] })).status, 409);
  });

  test('GET adjustment answers the stored adjustment with the entry’s flag', async () => {
    const { url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [
        { productId: 'BASE-S', currency: 'USD', adjustment: volume, allowUnitPriceEditing: true },
        { productId: 'BASE-S', currency: 'EUR', standardPrice: 3 },
      ],
    });
    const res = await ctx.call('GET', `${url}/products/BASE-S/adjustment`, { query: { currency: 'USD' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { adjustment: { ...volume, allowUnitPriceEditing: true } });
    for (const [productId, currency] of [
      ['BASE-S', 'EUR'],
      ['BASE-S', 'GBP'],
      ['BASE-L', 'USD'],
      ['NOT-THERE', 'USD'],
    ] as const) {
      const missing = await ctx.call('GET', `${url}/products/${productId}/adjustment`, {
        query: { currency },
      });
      assert.equal(missing.status, 404, `${productId} ${currency}`);
    }
    const noCurrency = await ctx.call('GET', `${url}/products/BASE-S/adjustment`);
    assert.equal(noCurrency.status, 400);
    assert.deepEqual(problemPointers(noCurrency.body), ['/currency']);
    assert.equal(noCurrency.body.errors[0].in, 'query');
    const badCurrency = await ctx.call('GET', `${url}/products/BASE-S/adjustment`, {
      query: { currency: 'usd' },
    });
    assert.equal(badCurrency.status, 400);
    await ctx.call('DELETE', url);
    const deleted = await ctx.call('GET', `${url}/products/BASE-S/adjustment`, {
      query: { currency: 'USD' },
    });
    assert.equal(deleted.status, 404, 'a deleted book no longer serves its entries');
  });

  test('PUT adjustment creates the entry when needed; its flag sets the entry’s', async () => {
    const { option, url } = await book();
    const path = `${url}/products/BASE-L/adjustment`;
    const enumAdjustment = {
      type: 'enum',
      property: 'size',
      values: [
        { value: 'S', unitPrice: 5 },
        { value: 'L', unitPrice: 7.25 },
      ],
    };
    const res = await ctx.call('PUT', path, {
      query: { currency: 'EUR' },
      body: { adjustment: { ...enumAdjustment, allowUnitPriceEditing: true } },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { adjustment: { ...enumAdjustment, allowUnitPriceEditing: true } });
    const entry = await ctx.call('PUT', `${url}/prices`, {
      body: [{ productId: 'BASE-L', currency: 'EUR', listPrice: 6 }],
    });
    assert.deepEqual(entry.body.entries[0], {
      productId: 'BASE-L',
      allowUnitPriceEditing: true,
      properties: { size: 'L' },
      prices: {
        EUR: {
          standardPrice: null,
          listPrice: 6,
          adjustment: { ...enumAdjustment, allowUnitPriceEditing: true },
        },
      },
    });
    const replaced = await ctx.call('PUT', path, {
      query: { currency: 'EUR' },
      body: { adjustment: { type: 'override', amount: 4 } },
    });
    assert.deepEqual(replaced.body, {
      adjustment: { type: 'override', amount: 4, allowUnitPriceEditing: true },
    });
    const stored = await storedEntries(ctx, option.priceBookId);
    assert.deepEqual(stored.prices, [
      {
        product_id: 'BASE-L',
        currency: 'EUR',
        standard_price: null,
        list_price: '6',
        adjustment: JSON.stringify({ type: 'override', amount: 4 }),
      },
    ]);
  });

  test('PUT adjustment errors: bad shape 400, rules 422, product not of the option 404, deleted book 409', async () => {
    const { url } = await book();
    const put = (productId: string, adjustment: unknown, currency = 'USD') =>
      ctx.call('PUT', `${url}/products/${productId}/adjustment`, {
        query: { currency },
        body: { adjustment },
      });
    const decimals = await put('BASE-S', { type: 'percent', amount: 1.0000001 });
    assert.equal(decimals.status, 400);
    assert.deepEqual(problemPointers(decimals.body), ['/adjustment/amount']);
    const overPercent = await put('BASE-S', { type: 'percent', amount: 101 });
    assert.equal(overPercent.status, 400);
    const duplicate = await put('BASE-S', {
      type: 'variant',
      values: [
        { value: 'a', unitPrice: 1 },
        { value: 'a', unitPrice: 2 },
      ],
    });
    assert.equal(duplicate.status, 422);
    assert.deepEqual(problemPointers(duplicate.body), ['/adjustment/values/1/value']);
    assert.equal((await put('EXTRA-SETUP', { type: 'override', amount: 1 })).status, 404);
    assert.equal((await put('BASE-S', { type: 'override', amount: 1 }, 'ABC')).status, 400);
    await ctx.call('DELETE', url);
    assert.equal((await put('BASE-S', { type: 'override', amount: 1 })).status, 409);
  });

  test('DELETE adjustment removes it and keeps the prices', async () => {
    const { url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [
        {
          productId: 'BASE-S',
          currency: 'USD',
          standardPrice: 5,
          adjustment: { type: 'override', amount: 4 },
        },
      ],
    });
    const path = `${url}/products/BASE-S/adjustment`;
    const res = await ctx.call('DELETE', path, { query: { currency: 'USD' } });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal((await ctx.call('GET', path, { query: { currency: 'USD' } })).status, 404);
    assert.equal((await ctx.call('DELETE', path, { query: { currency: 'USD' } })).status, 404);
    assert.equal((await ctx.call('DELETE', path)).status, 400);
    const search = await ctx.call('GET', `${url}/pricedProducts`);
    assert.deepEqual(search.body.results[0].prices, {
      USD: { standardPrice: 5, listPrice: null, adjustment: null },
    });
  });

  test('another account sees 404 and changes nothing', async () => {
    const { option, url } = await book();
    await ctx.call('PUT', `${url}/prices`, {
      body: [
        {
          productId: 'BASE-S',
          currency: 'USD',
          standardPrice: 5,
          adjustment: { type: 'override', amount: 4 },
        },
      ],
    });
    const before = await storedEntries(ctx, option.priceBookId);
    const other = await ctx.newKey('other');
    const adjustment = `${url}/products/BASE-S/adjustment`;
    const calls: [string, string, Record<string, unknown>][] = [
      ['PUT', `${url}/prices`, { body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: 1 }] }],
      ['DELETE', `${url}/prices`, { body: ['BASE-S'] }],
      ['GET', `${url}/pricedProducts`, {}],
      ['GET', adjustment, { query: { currency: 'USD' } }],
      [
        'PUT',
        adjustment,
        { query: { currency: 'USD' }, body: { adjustment: { type: 'override', amount: 1 } } },
      ],
      ['DELETE', adjustment, { query: { currency: 'USD' } }],
    ];
    for (const [method, path, options] of calls) {
      const res = await ctx.call(method as 'GET', path, { ...options, key: other });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.deepEqual(await storedEntries(ctx, option.priceBookId), before);
  });
});

describeEachDatabase('priced products search', (ctx) => {
  const products: { productId: string; properties: Record<string, string | null> }[] = [
    { productId: 'MON-27', properties: { label: 'ÉCRAN large', panel: 'IPS' } },
    { productId: 'mon-24', properties: { label: 'écran compact', panel: null } },
    { productId: 'KBD-1', properties: { layout: 'AZERTY' } },
    { productId: 'CABLE-%_', properties: {} },
  ];
  let url = '';

  test('set up a book with four priced products', async () => {
    const { options } = await createBundle(ctx, {
      options: [{ name: 'Peripherals', products: products.map((p, i) => ({ ...p, displayOrder: i })) }],
    });
    url = `/v1/pricebooks/${options[0].priceBookId}`;
    const res = await ctx.call('PUT', `${url}/prices`, {
      body: products.flatMap((p, i) => [
        { productId: p.productId, currency: 'USD', standardPrice: 10 + i },
        { productId: p.productId, currency: 'EUR', listPrice: 9 + i },
      ]),
    });
    assert.equal(res.status, 200);
  });

  test('without q every product, in the option’s order, prices keyed by currency', async () => {
    const res = await ctx.call('GET', `${url}/pricedProducts`);
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 4);
    assert.deepEqual(res.body.results[0], {
      productId: 'MON-27',
      allowUnitPriceEditing: false,
      properties: { label: 'ÉCRAN large', panel: 'IPS' },
      prices: {
        EUR: { standardPrice: null, listPrice: 9, adjustment: null },
        USD: { standardPrice: 10, listPrice: null, adjustment: null },
      },
    });
    assert.deepEqual(
      res.body.results.map((r: { productId: string }) => r.productId),
      products.map((p) => p.productId),
    );
  });

  test('q matches productId and property values case-insensitively, the same on both databases', async () => {
    const ids = async (q: string) =>
      (await ctx.call('GET', `${url}/pricedProducts`, { query: { q } })).body.results.map(
        (r: { productId: string }) => r.productId,
      );
    assert.deepEqual(await ids('MON'), ['MON-27', 'mon-24']);
    assert.deepEqual(await ids('écran'), ['MON-27', 'mon-24']);
    assert.deepEqual(await ids('ÉCRAN COMPACT'), ['mon-24']);
    assert.deepEqual(await ids('azerty'), ['KBD-1']);
    assert.deepEqual(await ids('%_'), ['CABLE-%_'], 'LIKE wildcards are plain characters');
    assert.deepEqual(await ids('label'), [], 'property names are not searched');
    assert.deepEqual(await ids('nothing'), []);
  });

  test('limit and offset page the matches; total counts them all', async () => {
    const page = await ctx.call('GET', `${url}/pricedProducts`, { query: { limit: '2', offset: '1' } });
    assert.equal(page.body.total, 4);
    assert.deepEqual(
      page.body.results.map((r: { productId: string }) => r.productId),
      ['mon-24', 'KBD-1'],
    );
    const past = await ctx.call('GET', `${url}/pricedProducts`, { query: { offset: '10' } });
    assert.deepEqual(past.body, { total: 4, results: [] });
    const filtered = await ctx.call('GET', `${url}/pricedProducts`, { query: { q: 'mon', limit: '1' } });
    assert.equal(filtered.body.total, 2);
    assert.equal(filtered.body.results.length, 1);
  });

  test('a search is one statement (the key, the book, the count, the page’s entries and prices)', async () => {
    const counted = countingQueries(ctx.db);
    const id = url.split('/').at(-1) ?? '';
    const account = (await authenticate(ctx.db, ctx.key, new KnownKeys())) as Account;
    const search = { q: 'écran', limit: 1, offset: 1 };
    const { bytes } = await searchPricedProducts(makeScope({ db: counted.db, account }), {
      id,
      query: search,
      cache: null,
    });
    const page = JSON.parse(bytes.toString()) as { total: number; results: { productId: string }[] };
    assert.deepEqual(
      page.results.map((r) => r.productId),
      ['mon-24'],
    );
    assert.equal(page.total, 2);
    assert.equal(counted.take(), 1);
  });

  test('currency limits prices to one currency', async () => {
    const res = await ctx.call('GET', `${url}/pricedProducts`, { query: { currency: 'EUR', q: 'kbd' } });
    assert.deepEqual(res.body.results[0].prices, {
      EUR: { standardPrice: null, listPrice: 11, adjustment: null },
    });
    const none = await ctx.call('GET', `${url}/pricedProducts`, { query: { currency: 'JPY', q: 'kbd' } });
    assert.deepEqual(none.body.results[0].prices, {});
  });

  test('bad paging or currency is 400 with a pointer into the query', async () => {
    for (const [query, at] of [
      [{ limit: '0' }, '/limit'],
      [{ limit: '101' }, '/limit'],
      [{ offset: '-1' }, '/offset'],
      [{ currency: 'EURO' }, '/currency'],
    ] as const) {
      const res = await ctx.call('GET', `${url}/pricedProducts`, { query });
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.deepEqual(problemPointers(res.body), [at]);
      assert.equal(res.body.errors[0].in, 'query');
    }
    assert.equal((await ctx.call('GET', '/v1/pricebooks/pb_nothing/pricedProducts')).status, 404);
  });

  test('a deleted book serves no entries', async () => {
    await ctx.call('DELETE', url);
    const res = await ctx.call('GET', `${url}/pricedProducts`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { total: 0, results: [] });
  });
});
