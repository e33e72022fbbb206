import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import {
  templateTokens,
  validateVariantDefinition,
  variantTable,
} from '../../src/price-books/product-variants.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { problemPointers } from './support.ts';

const definition = {
  isDynamic: true,
  template: 'TEE-{size}-{color}',
  properties: [
    { name: 'color', values: ['red', 'blue'] },
    { name: 'size', values: ['S', 'M'] },
  ],
};

describe('variant tables (pure)', () => {
  it('tokens are the placeholders in order, each once', () => {
    assert.deepEqual(templateTokens('{a}-{b}/{a}{}'), ['a', 'b', '']);
    assert.deepEqual(templateTokens('plain'), []);
  });

  it('dynamic variants are every combination, first token outermost', () => {
    const table = variantTable(definition, [
      {
        currency: 'USD',
        adjustment: {
          type: 'variant',
          values: [
            { value: 'TEE-M-blue', unitPrice: 12 },
            { value: 'TEE-S-red', unitPrice: 10 },
            { value: 'NOT-A-VARIANT', unitPrice: 1 },
          ],
        },
      },
    ]);
    assert.deepEqual(table.rows, [
      { currency: 'USD', variantId: 'TEE-S-red', unitPrice: 10, properties: { size: 'S', color: 'red' } },
      { currency: 'USD', variantId: 'TEE-M-blue', unitPrice: 12, properties: { size: 'M', color: 'blue' } },
    ]);
  });

  it('refuses duplicate ids, unused properties and too many combinations', () => {
    const codes = (d: typeof definition) => validateVariantDefinition(d).map((v) => [v.code, v.pointer]);
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: '{a}{b}',
        properties: [
          { name: 'a', values: ['x', 'xy'] },
          { name: 'b', values: ['yz', 'z'] },
        ],
      }),
      [['duplicate_variant', '/template']],
    );
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: '{a}',
        properties: [
          { name: 'a', values: ['x'] },
          { name: 'b', values: ['y'] },
        ],
      }),
      [['unused_property', '/properties/1/name']],
    );
    assert.deepEqual(codes({ ...definition, isDynamic: false, template: '{a}' }), [
      ['unknown_token', '/template'],
    ]);
    const many = Array.from({ length: 101 }, (_, i) => String(i));
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: '{a}{b}',
        properties: [
          { name: 'a', values: many },
          { name: 'b', values: many },
        ],
      }),
      [['too_many_variants', '/properties']],
    );
  });

  it('bounds the longest id and all ids together, worked out without making them', () => {
    const codes = (d: typeof definition) => validateVariantDefinition(d).map((v) => [v.code, v.pointer]);
    const values = (n: number, length: number) =>
      Array.from({ length: n }, (_, i) => String(i).padStart(length, 'v'));
    // The longest id counts every appearance of a placeholder, in characters, not UTF-16 units.
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: `${'😀'.repeat(198)}{a}{a}`,
        properties: [{ name: 'a', values: ['x', 'y'] }],
      }),
      [],
    );
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: `${'😀'.repeat(199)}{a}{a}`,
        properties: [{ name: 'a', values: ['x', 'y'] }],
      }),
      [['variant_id_too_long', '/template']],
    );
    // 10,000 ids of 51 characters: within the count, over the total.
    assert.deepEqual(
      codes({
        isDynamic: true,
        template: 'X{a}{b}',
        properties: [
          { name: 'a', values: values(100, 25) },
          { name: 'b', values: values(100, 25) },
        ],
      }),
      [['variant_table_too_large', '/properties']],
    );
    const [message] = validateVariantDefinition({
      isDynamic: true,
      template: 'X{a}{b}',
      properties: [
        { name: 'a', values: values(100, 25) },
        { name: 'b', values: values(100, 25) },
      ],
    });
    assert.match(message?.message ?? '', /510000 characters together; at most 500000/);
  });
});

describeEachDatabase('product variants', (ctx) => {
  async function setUp(key = ctx.key) {
    const { options } = await createBundle(ctx, {
      key,
      options: [
        {
          name: 'Shirts',
          products: [{ productId: 'TEE', properties: { fabric: 'cotton' } }, { productId: 'CAP' }],
        },
      ],
    });
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    const prices = await ctx.call('PUT', `${url}/prices`, {
      key,
      body: [
        {
          productId: 'TEE',
          currency: 'USD',
          standardPrice: 10,
          adjustment: {
            type: 'variant',
            values: [
              { value: 'TEE-S-red', unitPrice: 10 },
              { value: 'TEE-S-blue', unitPrice: 11 },
              { value: 'TEE-M-blue', unitPrice: 12.5 },
            ],
          },
        },
        {
          productId: 'TEE',
          currency: 'EUR',
          adjustment: { type: 'variant', values: [{ value: 'TEE-M-red', unitPrice: 9 }] },
        },
        { productId: 'TEE', currency: 'JPY', adjustment: { type: 'override', amount: 1500 } },
      ],
    });
    assert.equal(prices.status, 200);
    return { url, variants: `${url}/products/TEE/product-variants` };
  }

  test('a dynamic table: every combination, rows where the currency prices the variant', async () => {
    const { variants } = await setUp();
    const put = await ctx.call('PUT', variants, { body: definition });
    assert.equal(put.status, 200);
    const expected = {
      isDynamic: true,
      template: 'TEE-{size}-{color}',
      tokens: ['size', 'color'],
      properties: definition.properties,
      rows: [
        { currency: 'EUR', variantId: 'TEE-M-red', unitPrice: 9, properties: { size: 'M', color: 'red' } },
        { currency: 'USD', variantId: 'TEE-S-red', unitPrice: 10, properties: { size: 'S', color: 'red' } },
        { currency: 'USD', variantId: 'TEE-S-blue', unitPrice: 11, properties: { size: 'S', color: 'blue' } },
        {
          currency: 'USD',
          variantId: 'TEE-M-blue',
          unitPrice: 12.5,
          properties: { size: 'M', color: 'blue' },
        },
      ],
    };
    assert.deepEqual(put.body, expected);
    const get = await ctx.call('GET', variants);
    assert.equal(get.status, 200);
    assert.deepEqual(get.body, expected);
  });

  test('a static table: the values of the variant adjustments, properties {}', async () => {
    const { variants } = await setUp();
    const body = {
      isDynamic: false,
      template: 'TEE-{size}',
      properties: [{ name: 'size', values: ['S', 'M'] }],
    };
    const put = await ctx.call('PUT', variants, { body });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body, {
      ...body,
      tokens: ['size'],
      rows: [
        { currency: 'EUR', variantId: 'TEE-M-red', unitPrice: 9, properties: {} },
        { currency: 'USD', variantId: 'TEE-S-red', unitPrice: 10, properties: {} },
        { currency: 'USD', variantId: 'TEE-S-blue', unitPrice: 11, properties: {} },
        { currency: 'USD', variantId: 'TEE-M-blue', unitPrice: 12.5, properties: {} },
      ],
    });
  });

  test('PUT replaces the table and keeps the entry’s prices', async () => {
    const { url, variants } = await setUp();
    await ctx.call('PUT', variants, { body: definition });
    const replaced = await ctx.call('PUT', variants, {
      body: { isDynamic: true, template: 'TEE-{size}-red', properties: [{ name: 'size', values: ['M'] }] },
    });
    assert.deepEqual(replaced.body.rows, [
      { currency: 'EUR', variantId: 'TEE-M-red', unitPrice: 9, properties: { size: 'M' } },
    ]);
    const search = await ctx.call('GET', `${url}/pricedProducts`, { query: { q: 'tee', currency: 'USD' } });
    assert.equal(search.body.results[0].prices.USD.standardPrice, 10);
  });

  test('a product without prices gets an entry and an empty table', async () => {
    const { url } = await setUp();
    const res = await ctx.call('PUT', `${url}/products/CAP/product-variants`, {
      body: { isDynamic: true, template: 'CAP-{size}', properties: [{ name: 'size', values: ['one'] }] },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.rows, []);
    const search = await ctx.call('GET', `${url}/pricedProducts`, { query: { q: 'cap' } });
    assert.deepEqual(search.body.results[0].prices, {});
  });

  test('rules are 422, shapes 400, each with a pointer', async () => {
    const { variants } = await setUp();
    const cases: [unknown, number, string[]][] = [
      [{ ...definition, template: 'TEE-{size}-{fit}' }, 422, ['/template']],
      [{ ...definition, template: 'TEE-{size}' }, 422, ['/properties/0/name']],
      [
        { ...definition, properties: [...definition.properties, { name: 'size', values: ['L'] }] },
        422,
        ['/properties/2/name'],
      ],
      [
        { ...definition, properties: [{ name: 'color', values: ['red', 'red'] }, definition.properties[1]] },
        422,
        ['/properties/0/values/1'],
      ],
      [{ ...definition, isDynamic: 'yes' }, 400, ['/isDynamic']],
      [{ isDynamic: true, template: '' }, 400, ['/properties', '/template']],
    ];
    for (const [body, status, pointers] of cases) {
      const res = await ctx.call('PUT', variants, { body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.deepEqual(problemPointers(res.body), pointers, JSON.stringify(body));
    }
    assert.equal((await ctx.call('GET', variants)).status, 404, 'nothing was stored');
  });

  test('a table of huge ids is a quick 422, and a variant id over 200 characters a 400, each with a pointer', async () => {
    const { url, variants } = await setUp();
    // The hostile definition of a 41.7 KB body: 10,000 ids of 66,400 characters each, 664 million in all.
    const values = (prefix: string) =>
      Array.from({ length: 100 }, (_, i) => `${prefix}${i}`.padEnd(200, 'v'));
    const hostile = {
      isDynamic: true,
      template: '{a}{b}'.repeat(166),
      properties: [
        { name: 'a', values: values('a') },
        { name: 'b', values: values('b') },
      ],
    };
    const started = performance.now();
    const put = await ctx.call('PUT', variants, { body: hostile });
    const elapsed = performance.now() - started;
    assert.equal(put.status, 422, put.text);
    assert.deepEqual(
      put.body.errors.map((e: { code: string; pointer: string; message: string }) => [
        e.code,
        e.pointer,
        e.message,
      ]),
      [
        [
          'variant_id_too_long',
          '/template',
          'the longest variant id would have 66400 characters; at most 200 are allowed',
        ],
        [
          'variant_table_too_large',
          '/properties',
          'the variant ids would have 664000000 characters together; at most 500000 are allowed',
        ],
      ],
    );
    assert.ok(elapsed < 5_000, `${elapsed} ms`); // generous: no id is ever made, so this takes milliseconds
    assert.equal((await ctx.call('GET', variants)).status, 404, 'nothing was stored');
    const long = await ctx.call('PUT', `${url}/prices`, {
      body: [
        {
          productId: 'TEE',
          currency: 'USD',
          adjustment: { type: 'variant', values: [{ value: 'v'.repeat(201), unitPrice: 1 }] },
        },
      ],
    });
    assert.equal(long.status, 400, long.text);
    assert.ok(
      long.body.errors.some(
        (e: { pointer: string; code: string }) =>
          e.pointer === '/0/adjustment/values/0/value' && e.code === 'invalid_max_length',
      ),
      long.text,
    );
  });

  test('404: no table, a product not of the option, an unknown book; a deleted book 409 on write, 404 on read', async () => {
    const { url, variants } = await setUp();
    assert.equal((await ctx.call('GET', variants)).status, 404);
    assert.equal(
      (await ctx.call('PUT', `${url}/products/OTHER/product-variants`, { body: definition })).status,
      404,
    );
    assert.equal(
      (await ctx.call('GET', '/v1/pricebooks/pb_nothing/products/TEE/product-variants')).status,
      404,
    );
    await ctx.call('PUT', variants, { body: definition });
    await ctx.call('DELETE', url);
    assert.equal((await ctx.call('GET', variants)).status, 404);
    assert.equal((await ctx.call('PUT', variants, { body: definition })).status, 409);
  });

  test('another account sees 404 and changes nothing', async () => {
    const { variants } = await setUp();
    await ctx.call('PUT', variants, { body: definition });
    const before = (await ctx.call('GET', variants)).body;
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('GET', variants, { key: other })).status, 404);
    const put = await ctx.call('PUT', variants, {
      key: other,
      body: { isDynamic: false, template: 'x', properties: [] },
    });
    assert.equal(put.status, 404);
    assert.deepEqual((await ctx.call('GET', variants)).body, before);
  });
});
