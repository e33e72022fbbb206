import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { OptionCreateBody } from '../../src/options/options.schemas.ts';
import type { Adjustment } from '../../src/pricing/adjustment.schema.ts';
import { catalogueOf, quote as priceConfiguration } from '../../src/quotes/quotes.service.ts';
import { limitsOf, scopeOutsideHttp } from '../../src/shared/scope.ts';
import { type CallResult, describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { type CreatedBundle, createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

interface Price {
  productId: string;
  currency?: string;
  listPrice?: number | null;
  standardPrice?: number | null;
  adjustment?: Adjustment | null;
  allowUnitPriceEditing?: boolean;
}

async function expectOk(result: CallResult, status: number, what: string): Promise<Json> {
  assert.equal(result.status, status, `${what}: ${result.text}`);
  return result.body;
}

async function setPrices(ctx: TestContext, priceBookId: string, prices: Price[]): Promise<void> {
  const body = prices.map((p) => ({ currency: 'USD', ...p }));
  await expectOk(await ctx.call('PUT', `/v1/pricebooks/${priceBookId}/prices`, { body }), 200, 'set prices');
}

async function setDefault(ctx: TestContext, created: CreatedBundle, option: number, productId: string) {
  const opt = created.options[option];
  const product = opt.products.find((p: Json) => p.productId === productId);
  await expectOk(
    await ctx.call('PUT', `/v1/bundles/${created.bundle.id}/options/${opt.id}`, {
      body: { configuration: { defaultOptionProductId: product.id } },
    }),
    200,
    'set default product',
  );
}

/** The catalogue every quote below is made against; each option exercises some of the rules. */
const options: OptionCreateBody[] = [
  {
    name: 'Base',
    type: 'INCLUDED',
    configuration: { minCount: 1, maxCount: 1 },
    products: [
      { productId: 'BASE-S', configuration: { minQuantity: 2, maxQuantity: 10 } },
      { productId: 'BASE-L' },
    ],
  },
  {
    name: 'Extras',
    type: 'ADD_ON',
    configuration: { minCount: 2, maxCount: 3 },
    products: [
      { productId: 'WARRANTY', configuration: { minQuantity: 1, maxQuantity: 1, readonlyQuantity: true } },
      { productId: 'SETUP' },
      { productId: 'CABLE' },
      { productId: 'GIFT' },
    ],
  },
  {
    name: 'Styles',
    products: [
      { productId: 'SHIRT' },
      { productId: 'PAINT', properties: { color: 'red' } },
      { productId: 'ROPE', properties: { length: '5' } },
      { productId: 'UNPRICED' },
    ],
  },
];

const prices: Price[][] = [
  [
    {
      productId: 'BASE-S',
      listPrice: 120,
      adjustment: {
        type: 'volume',
        tiers: [
          { firstUnit: 2, lastUnit: 9, unitPrice: 100 },
          { firstUnit: 10, lastUnit: 30, unitPrice: 90 },
        ],
      },
    },
    { productId: 'BASE-L', listPrice: 150, adjustment: { type: 'percent', amount: 10 } },
  ],
  [
    { productId: 'WARRANTY', listPrice: 199.99, adjustment: { type: 'percent', amount: 12.5 } },
    { productId: 'SETUP', standardPrice: 150, allowUnitPriceEditing: true },
    { productId: 'CABLE', listPrice: 12, adjustment: { type: 'override', amount: 9.99 } },
    { productId: 'GIFT', listPrice: 0 },
  ],
  [
    {
      productId: 'SHIRT',
      adjustment: {
        type: 'variant',
        values: [
          { value: 'S', unitPrice: 20 },
          { value: 'L', unitPrice: 25.5 },
        ],
      },
    },
    {
      productId: 'PAINT',
      adjustment: {
        type: 'enum',
        property: 'color',
        values: [
          { value: 'red', unitPrice: 10 },
          { value: 'blue', unitPrice: 12.5 },
        ],
      },
    },
    {
      productId: 'ROPE',
      adjustment: {
        type: 'range',
        property: 'length',
        values: [
          { firstUnit: 0, lastUnit: 10, unitPrice: 1.1 },
          { firstUnit: 10.5, lastUnit: 100, unitPrice: 0.75 },
        ],
      },
    },
  ],
];

async function createPricedBundle(ctx: TestContext, isActive = true): Promise<CreatedBundle> {
  const created = await createBundle(ctx, { options, isActive });
  for (const [i, list] of prices.entries()) await setPrices(ctx, created.options[i].priceBookId, list);
  await setDefault(ctx, created, 0, 'BASE-L');
  return created;
}

/** A request body for one bundle; each option as [option index, products]. */
function body(
  created: CreatedBundle,
  chosen: [number, Json[]][],
  extra: { currency?: string; quantity?: number; at?: string } = {},
): Json {
  const bundle: Json = {
    bundleId: created.bundle.id,
    options: chosen.map(([i, products]) => ({ optionId: created.options[i].id, products })),
  };
  if (extra.quantity !== undefined) bundle.quantity = extra.quantity;
  const request: Json = { currency: extra.currency ?? 'USD', bundles: [bundle] };
  if (extra.at !== undefined) request.at = extra.at;
  return request;
}

const extras = [
  { productId: 'WARRANTY', quantity: 1 },
  { productId: 'SETUP', quantity: 1 },
];

describeEachDatabase('POST /v1/quotes/price', (ctx) => {
  let priced: CreatedBundle;
  const quote = (request: Json, key?: string) => ctx.call('POST', '/v1/quotes/price', { body: request, key });

  /** The violations of a 422, as [code, pointer], after checking the problem's shape. */
  async function violations(request: Json, code = 'quote_invalid'): Promise<[string, string][]> {
    const result = await quote(request);
    assert.equal(result.status, 422, result.text);
    assert.match(String(result.headers['content-type']), /^application\/problem\+json/);
    assert.equal(result.body.code, code);
    assert.equal(result.body.status, 422);
    assert.equal(result.body.instance, '/v1/quotes/price');
    for (const item of result.body.errors) {
      assert.deepEqual(Object.keys(item).sort(), ['code', 'in', 'message', 'pointer']);
      assert.equal(item.in, 'body');
      assert.ok(item.message.length > 0);
    }
    return result.body.errors.map((e: Json) => [e.code, e.pointer]);
  }

  before(async () => {
    priced = await createPricedBundle(ctx);
  });

  describe('a valid configuration', () => {
    test('prices every adjustment type, multiplied by the bundle quantity, and sums the rounded lines', async () => {
      const request = body(
        priced,
        [
          [0, [{ productId: 'BASE-S', quantity: 5 }]],
          [
            1,
            [
              { productId: 'WARRANTY', quantity: 1 },
              { productId: 'SETUP', quantity: 1, unitPrice: 99.99 },
              { productId: 'CABLE', quantity: 3 },
            ],
          ],
          [
            2,
            [
              { productId: 'SHIRT', quantity: 1, variantId: 'L' },
              { productId: 'PAINT', quantity: 1, properties: { color: 'blue' } },
              { productId: 'ROPE', quantity: 7 },
            ],
          ],
        ],
        { quantity: 2 },
      );
      const result = await quote(request);
      assert.equal(result.status, 200, result.text);
      const { currency, at, lines, total } = result.body;
      assert.equal(currency, 'USD');
      assert.ok(Math.abs(Date.parse(at) - Date.now()) < 60_000);
      assert.deepEqual(
        lines.map((l: Json) => [l.productId, l.quantity, l.listPrice, l.unitPrice, l.total, l.trace.basis]),
        [
          ['BASE-S', 10, 120, 90, 900, 'tier'],
          ['WARRANTY', 2, 199.99, 174.99125, 349.98, 'percent'],
          ['SETUP', 2, null, 99.99, 199.98, 'standardPrice'],
          ['CABLE', 6, 12, 9.99, 59.94, 'override'],
          ['SHIRT', 2, null, 25.5, 51, 'variant'],
          ['PAINT', 2, null, 12.5, 25, 'value'],
          ['ROPE', 14, null, 1.1, 15.4, 'range'],
        ],
      );
      assert.equal(total, 1601.3);
      for (const line of lines) assert.equal(line.bundleId, priced.bundle.id);
      assert.deepEqual(
        lines.map((l: Json) => l.optionId),
        [0, 1, 1, 1, 2, 2, 2].map((i) => priced.options[i].id),
      );
    });

    test('traces each line to its price book, option product and what set the price', async () => {
      const request = body(priced, [
        [0, [{ productId: 'BASE-S', quantity: 2 }]],
        [
          1,
          [
            { productId: 'WARRANTY', quantity: 1 },
            { productId: 'SETUP', quantity: 1, unitPrice: 120.5 },
          ],
        ],
      ]);
      const result = await quote(request);
      assert.equal(result.status, 200, result.text);
      const [base, warranty, setup] = result.body.lines;
      const optionProduct = (option: number, productId: string) =>
        priced.options[option].products.find((p: Json) => p.productId === productId).id;
      assert.deepEqual(base.trace, {
        priceBookId: priced.options[0].priceBookId,
        optionProductId: optionProduct(0, 'BASE-S'),
        defaulted: false,
        adjustmentType: 'volume',
        basis: 'tier',
        tier: { firstUnit: 2, lastUnit: 9 },
        priceBookUnitPrice: 100,
        unitPriceEdited: false,
      });
      assert.deepEqual(base.adjustment, { ...prices[0]?.[0]?.adjustment, allowUnitPriceEditing: false });
      assert.deepEqual(warranty.trace, {
        priceBookId: priced.options[1].priceBookId,
        optionProductId: optionProduct(1, 'WARRANTY'),
        defaulted: false,
        adjustmentType: 'percent',
        basis: 'percent',
        base: { source: 'listPrice', price: 199.99 },
        percent: 12.5,
        priceBookUnitPrice: 174.99125,
        unitPriceEdited: false,
      });
      assert.deepEqual(
        [setup.unitPrice, setup.adjustment, setup.trace.priceBookUnitPrice, setup.trace.unitPriceEdited],
        [120.5, null, 150, true],
      );
    });

    test('fills a left-out INCLUDED option with its default product at its minQuantity (at least 1)', async () => {
      const result = await quote(body(priced, [[1, extras]], { quantity: 3 }));
      assert.equal(result.status, 200, result.text);
      const filled = result.body.lines.at(-1);
      assert.deepEqual(
        [
          filled.optionId,
          filled.productId,
          filled.quantity,
          filled.unitPrice,
          filled.total,
          filled.trace.defaulted,
        ],
        [priced.options[0].id, 'BASE-L', 3, 135, 405, true],
      );
      assert.equal(result.body.lines.length, 3);
    });

    test('looks up enum and range values in the stored properties unless the line overrides them', async () => {
      const styles = (products: Json[]) =>
        body(priced, [
          [1, extras],
          [2, products],
        ]);
      const stored = await quote(
        styles([
          { productId: 'PAINT', quantity: 1 },
          { productId: 'ROPE', quantity: 1 },
        ]),
      );
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(
        stored.body.lines.slice(2, 4).map((l: Json) => [l.unitPrice, l.trace.value]),
        [
          [10, 'red'],
          [1.1, '5'],
        ],
      );
      const overridden = await quote(
        styles([{ productId: 'ROPE', quantity: 1, properties: { length: '10.5' } }]),
      );
      assert.equal(overridden.status, 200, overridden.text);
      assert.deepEqual(overridden.body.lines[2].trace.range, { firstUnit: 10.5, lastUnit: 100 });
    });

    test('rounds line totals to the currency’s minor units: JPY 0, KWD 3', async () => {
      const book = priced.options[1].priceBookId;
      await setPrices(ctx, book, [
        {
          productId: 'WARRANTY',
          currency: 'JPY',
          listPrice: 1999,
          adjustment: { type: 'percent', amount: 12.5 },
        },
        { productId: 'SETUP', currency: 'JPY', listPrice: 0.5 },
        {
          productId: 'WARRANTY',
          currency: 'KWD',
          listPrice: 1.999,
          adjustment: { type: 'percent', amount: 12.5 },
        },
        { productId: 'SETUP', currency: 'KWD', listPrice: 0.0005 },
      ]);
      await setPrices(ctx, priced.options[0].priceBookId, [
        { productId: 'BASE-L', currency: 'JPY', listPrice: 1000 },
        { productId: 'BASE-L', currency: 'KWD', listPrice: 1 },
      ]);
      const cases: [string, number[], number][] = [
        ['JPY', [5247, 2, 3000], 8249],
        ['KWD', [5.247, 0.002, 3], 8.249],
      ];
      for (const [currency, totals, total] of cases) {
        const request = body(priced, [[1, extras]], { currency, quantity: 3 });
        const result = await quote(request);
        assert.equal(result.status, 200, result.text);
        assert.equal(result.body.currency, currency);
        assert.deepEqual(
          result.body.lines.map((l: Json) => l.total),
          totals,
          currency,
        );
        assert.equal(result.body.total, total, currency);
      }
    });

    test('loads with the same five queries whatever the number of bundles in one round (the details four, and rules)', async () => {
      const more = [await createPricedBundle(ctx), await createPricedBundle(ctx)];
      const counted = countingQueries(ctx.db);
      const count = async (bundles: CreatedBundle[]) => {
        counted.take();
        const request = { currency: 'USD', bundles: bundles.map((b) => body(b, [[1, extras]]).bundles[0]) };
        const answer = await priceConfiguration(scopeOutsideHttp(counted.db, 'acme', limitsOf(ctx.config)), {
          request,
          cache: null,
        });
        assert.equal(answer.lines.length, 3 * bundles.length);
        return counted.take();
      };
      assert.equal(await count([priced]), 5);
      // Several bundles: a count of their products first, to plan the rounds (src/catalogue/rounds.ts).
      assert.equal(await count([priced, ...more]), 6);
    });

    test('a catalogue of more bundles than one round holds is what each bundle loads alone', async () => {
      // Past 300 products a round is full: these three are read one round each.
      const large = [];
      for (let b = 0; b < 3; b++) {
        const made = await createBundle(ctx, {
          options: [
            {
              name: 'Many',
              type: 'ADD_ON',
              products: Array.from({ length: 160 }, (_, i) => ({
                productId: `P-${i}`,
                properties: { i: String(i) },
              })),
            },
          ],
        });
        large.push(made.bundle.id as string);
      }
      const scope = scopeOutsideHttp(ctx.db, 'acme', limitsOf(ctx.config));
      const load = (bundleIds: string[]) =>
        catalogueOf(scope, { cache: null, request: { bundleIds, currency: 'USD', at: undefined } });
      const whole = (await load(large)).catalogue;
      assert.deepEqual([...whole.keys()].sort(), [...large].sort());
      for (const id of large) assert.deepEqual(whole.get(id), (await load([id])).catalogue.get(id));
    });

    test('is a read: allowed to a read-only key, and changes nothing', async () => {
      const readOnly = await ctx.newKey('acme', { readOnly: true });
      const request = body(priced, [[1, extras]]);
      const first = await quote(request, readOnly);
      assert.equal(first.status, 200, first.text);
      const second = await quote(request);
      assert.deepEqual(second.body.lines, first.body.lines);
    });

    test('needs an API key', async () => {
      const result = await quote(body(priced, [[1, extras]]), null as unknown as string);
      assert.equal(result.status, 401);
    });

    test('prices with the books effective at `at`', async () => {
      const dated = await createPricedBundle(ctx);
      const book = dated.options[1].priceBookId;
      const patched = await ctx.call('PATCH', `/v1/pricebooks/${book}`, {
        body: { effectiveStartDate: '2030-01-01T00:00:00Z', effectiveEndDate: '2031-01-01T00:00:00Z' },
      });
      assert.equal(patched.status, 200, patched.text);
      const at = (instant?: string) =>
        body(dated, [[1, extras]], instant === undefined ? {} : { at: instant });
      assert.deepEqual(await violations(at()), [['price_book_not_effective', '/bundles/0/options/0']]);
      for (const instant of [
        '2030-01-01T00:00:00.000Z',
        '2030-12-31T23:59:59.999Z',
        '2030-06-01T02:00:00+02:00',
      ]) {
        const result = await quote(at(instant));
        assert.equal(result.status, 200, `${instant}: ${result.text}`);
        assert.equal(result.body.at, new Date(instant).toISOString());
      }
      assert.deepEqual(await violations(at('2031-01-01T00:00:00.000Z')), [
        ['price_book_not_effective', '/bundles/0/options/0'],
      ]);
    });
  });

  describe('violations, each with a stable code and a pointer into the body', () => {
    test('unknown_reference for a bundle, made up or another account’s: the answer’s code too', async () => {
      const other = await ctx.newKey('globex');
      const theirs = await createBundle(ctx, { key: other });
      for (const bundleId of ['bnd_nope', theirs.bundle.id]) {
        const request = { currency: 'USD', bundles: [{ bundleId, options: [] }] };
        assert.deepEqual(await violations(request, 'unknown_reference'), [
          ['unknown_reference', '/bundles/0/bundleId'],
        ]);
        const result = await quote(request);
        assert.equal(result.body.errors[0].message, `there is no bundle ${JSON.stringify(bundleId)}`);
      }
    });

    test('unknown_reference for an option, of another bundle or another account', async () => {
      const other = await createBundle(ctx);
      const theirs = await createBundle(ctx, { key: await ctx.newKey('globex') });
      for (const optionId of [other.options[1].id, theirs.options[1].id, 'opt_nope']) {
        const request = body(priced, [[1, extras]]);
        request.bundles[0].options.push({ optionId, products: extras });
        assert.deepEqual(await violations(request, 'unknown_reference'), [
          ['unknown_reference', '/bundles/0/options/1/optionId'],
        ]);
        const result = await quote(request);
        assert.match(result.body.errors[0].message, new RegExp(`has no option "${optionId}"`));
      }
    });

    test('an empty products array: too_few_products where the option needs more, else nothing chosen', async () => {
      // Extras (ADD_ON) needs 2; Styles (ADD_ON) has no minimum; Base is INCLUDED, so it needs 1 when present.
      assert.deepEqual(await violations(body(priced, [[1, []]])), [
        ['too_few_products', '/bundles/0/options/0/products'],
      ]);
      assert.deepEqual(await violations(body(priced, [[0, []]])), [
        ['too_few_products', '/bundles/0/options/0/products'],
      ]);
      const nothing = await quote(body(priced, [[2, []]]));
      assert.equal(nothing.status, 200, nothing.text);
      // Base, left out, is filled with its default; Styles adds no line.
      assert.deepEqual(
        nothing.body.lines.map((line: Json) => line.productId),
        ['BASE-L'],
      );
    });

    test('an empty products array of an option whose price book is deleted prices nothing and is no violation', async () => {
      const created = await createPricedBundle(ctx);
      const deleted = await ctx.call('DELETE', `/v1/pricebooks/${created.options[2].priceBookId}`);
      assert.equal(deleted.status, 204, deleted.text);
      const result = await quote(body(created, [[2, []]]));
      assert.equal(result.status, 200, result.text);
    });

    test('bundle_inactive', async () => {
      const inactive = await createPricedBundle(ctx, false);
      assert.deepEqual(await violations(body(inactive, [[1, extras]])), [
        ['bundle_inactive', '/bundles/0/bundleId'],
      ]);
    });

    test('unknown_reference beside another violation: the answer is quote_invalid', async () => {
      const other = await createBundle(ctx);
      const request = body(priced, [
        [1, extras],
        [1, extras],
      ]);
      request.bundles[0].options.push({ optionId: other.options[1].id, products: extras });
      assert.deepEqual(await violations(request), [
        ['duplicate_option', '/bundles/0/options/1/optionId'],
        ['unknown_reference', '/bundles/0/options/2/optionId'],
      ]);
    });

    test('included_option_missing at the bundle’s options', async () => {
      const plain = await createBundle(ctx);
      assert.deepEqual(
        await violations({ currency: 'USD', bundles: [{ bundleId: plain.bundle.id, options: [] }] }),
        [['included_option_missing', '/bundles/0/options']],
      );
    });

    test('too_few_products and too_many_products', async () => {
      assert.deepEqual(await violations(body(priced, [[1, [{ productId: 'SETUP', quantity: 1 }]]])), [
        ['too_few_products', '/bundles/0/options/0/products'],
      ]);
      const four = ['WARRANTY', 'SETUP', 'CABLE', 'GIFT'].map((productId) => ({ productId, quantity: 1 }));
      assert.deepEqual(await violations(body(priced, [[1, four]])), [
        ['too_many_products', '/bundles/0/options/0/products'],
      ]);
    });

    test('unknown_product and duplicate_product', async () => {
      const request = body(priced, [
        [1, [...extras, { productId: 'BASE-S', quantity: 2 }, { productId: 'SETUP', quantity: 1 }]],
      ]);
      const codes = await violations(request);
      assert.deepEqual(codes, [
        ['too_many_products', '/bundles/0/options/0/products'],
        ['unknown_product', '/bundles/0/options/0/products/2/productId'],
        ['duplicate_product', '/bundles/0/options/0/products/3/productId'],
      ]);
    });

    test('quantity_below_min, quantity_above_max and quantity_readonly', async () => {
      const at = (i: number, k: number) => `/bundles/0/options/${i}/products/${k}/quantity`;
      assert.deepEqual(
        await violations(
          body(priced, [
            [0, [{ productId: 'BASE-S', quantity: 1 }]],
            [1, [{ productId: 'WARRANTY', quantity: 2 }, extras[1]]],
          ]),
        ),
        [
          ['quantity_below_min', at(0, 0)],
          ['quantity_readonly', at(1, 0)],
        ],
      );
      assert.deepEqual(
        await violations(
          body(priced, [
            [0, [{ productId: 'BASE-S', quantity: 11 }]],
            [1, extras],
          ]),
        ),
        [['quantity_above_max', at(0, 0)]],
      );
    });

    test('unit_price_not_editable', async () => {
      const request = body(priced, [[1, [extras[0], { productId: 'CABLE', quantity: 1, unitPrice: 5 }]]]);
      assert.deepEqual(await violations(request), [
        ['unit_price_not_editable', '/bundles/0/options/0/products/1/unitPrice'],
      ]);
    });

    test('price_book_deleted', async () => {
      const deleted = await createPricedBundle(ctx);
      const result = await ctx.call('DELETE', `/v1/pricebooks/${deleted.options[1].priceBookId}`);
      assert.equal(result.status, 204, result.text);
      assert.deepEqual(await violations(body(deleted, [[1, extras]])), [
        ['price_book_deleted', '/bundles/0/options/0'],
      ]);
    });

    test('price_book_not_effective, for a default product too', async () => {
      const dated = await createPricedBundle(ctx);
      const patched = await ctx.call('PATCH', `/v1/pricebooks/${dated.options[0].priceBookId}`, {
        body: { effectiveEndDate: '2020-01-01T00:00:00Z' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(await violations(body(dated, [[1, extras]])), [
        ['price_book_not_effective', '/bundles/0/options'],
      ]);
    });

    test('no_price, for a product without an entry and for a currency without prices', async () => {
      assert.deepEqual(
        await violations(
          body(priced, [
            [1, extras],
            [2, [{ productId: 'UNPRICED', quantity: 1 }]],
          ]),
        ),
        [['no_price', '/bundles/0/options/1/products/0']],
      );
      assert.deepEqual(await violations(body(priced, [[1, extras]], { currency: 'EUR' })), [
        ['no_price', '/bundles/0/options/0/products/0'],
        ['no_price', '/bundles/0/options/0/products/1'],
        ['no_price', '/bundles/0/options'],
      ]);
    });

    test('no_matching_tier on the quantity multiplied by the bundle quantity', async () => {
      assert.deepEqual(
        await violations(
          body(
            priced,
            [
              [0, [{ productId: 'BASE-S', quantity: 8 }]],
              [1, extras],
            ],
            { quantity: 4 },
          ),
        ),
        [['no_matching_tier', '/bundles/0/options/0/products/0/quantity']],
      );
    });

    test('no_matching_value and no_matching_range', async () => {
      const request = body(priced, [
        [1, extras],
        [
          2,
          [
            { productId: 'PAINT', quantity: 1, properties: { color: 'green' } },
            { productId: 'ROPE', quantity: 1, properties: { length: '10.2' } },
          ],
        ],
      ]);
      assert.deepEqual(await violations(request), [
        ['no_matching_value', '/bundles/0/options/1/products/0/properties/color'],
        ['no_matching_range', '/bundles/0/options/1/products/1/properties/length'],
      ]);
    });

    test('variant_required and no_matching_variant', async () => {
      const request = body(priced, [
        [1, extras],
        [2, [{ productId: 'SHIRT', quantity: 1 }]],
      ]);
      assert.deepEqual(await violations(request), [
        ['variant_required', '/bundles/0/options/1/products/0/variantId'],
      ]);
      request.bundles[0].options[1].products[0].variantId = 'XL';
      assert.deepEqual(await violations(request), [
        ['no_matching_variant', '/bundles/0/options/1/products/0/variantId'],
      ]);
    });

    test('lists every violation of every bundle at once', async () => {
      const plain = await createBundle(ctx);
      const request = body(priced, [
        [0, [{ productId: 'BASE-S', quantity: 11, unitPrice: 1 }]],
        [1, [{ productId: 'WARRANTY', quantity: 3 }]],
      ]);
      request.bundles.push({ bundleId: 'bnd_nope', options: [] }, { bundleId: plain.bundle.id, options: [] });
      assert.deepEqual(await violations(request), [
        ['quantity_above_max', '/bundles/0/options/0/products/0/quantity'],
        ['unit_price_not_editable', '/bundles/0/options/0/products/0/unitPrice'],
        ['too_few_products', '/bundles/0/options/1/products'],
        ['quantity_readonly', '/bundles/0/options/1/products/0/quantity'],
        ['unknown_reference', '/bundles/1/bundleId'],
        ['included_option_missing', '/bundles/2/options'],
      ]);
    });
  });

  describe('requests that break the schema: 400', () => {
    const problems = async (request: Json): Promise<[string, string][]> => {
      const result = await quote(request);
      assert.equal(result.status, 400, result.text);
      assert.equal(result.body.code, 'validation_failed');
      return result.body.errors.map((e: Json) => [e.code, e.pointer]);
    };

    test('an edited unit price with more than 6 decimals', async () => {
      const request = body(priced, [
        [1, [extras[0], { productId: 'SETUP', quantity: 1, unitPrice: 0.1 + 0.2 }]],
      ]);
      assert.deepEqual(await problems(request), [
        ['too_many_decimals', '/bundles/0/options/0/products/1/unitPrice'],
      ]);
    });

    test('more than 1000 lines, or more than 100 bundles', async () => {
      const products = Array.from({ length: 501 }, (_, i) => ({ productId: `P${i}`, quantity: 1 }));
      const lines = body(priced, [
        [1, products],
        [2, products],
      ]);
      assert.deepEqual(await problems(lines), [['too_many_lines', '/bundles']]);
      const bundles = {
        currency: 'USD',
        bundles: Array.from({ length: 101 }, () => ({ bundleId: 'b', options: [] })),
      };
      assert.deepEqual(await problems(bundles), [['invalid_max_items', '/bundles']]);
    });

    test('an unknown currency, a quantity below 1, an unknown field, a bad instant', async () => {
      const request = body(priced, [[1, [{ productId: 'SETUP', quantity: 0, color: 'red' }]]], {
        currency: 'XXX',
        at: 'yesterday',
      });
      const codes = (await problems(request)).map(([, pointer]) => pointer).sort();
      assert.deepEqual(codes, [
        '/at',
        '/bundles/0/options/0/products/0/color',
        '/bundles/0/options/0/products/0/quantity',
        '/currency',
      ]);
    });
  });

  test('the OpenAPI document describes the operation, its request and its answer', async () => {
    const document = (await ctx.call('GET', '/openapi.json', { key: null })).body;
    const operation = document.paths['/v1/quotes/price'].post;
    assert.equal(operation.operationId, 'priceQuote');
    assert.ok(operation.summary);
    assert.deepEqual(operation.tags, ['quotes']);
    assert.ok(operation.requestBody.content['application/json'].schema);
    assert.ok(operation.responses['200']);
    assert.ok(operation.responses['422']);
  });
});
