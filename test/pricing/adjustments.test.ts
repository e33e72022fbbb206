import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { Adjustment } from '../../src/pricing/adjustment.schema.ts';
import {
  type PriceEntry,
  type PriceLine,
  type PriceTrace,
  priceUnit,
  validateAdjustment,
} from '../../src/pricing/adjustments.ts';
import { lineTotal } from '../../src/pricing/money.ts';

function entry(
  adjustment: Adjustment | null,
  prices: { listPrice?: string; standardPrice?: string; currency?: string } = {},
): PriceEntry {
  return {
    currency: prices.currency ?? 'USD',
    listPrice: prices.listPrice ?? null,
    standardPrice: prices.standardPrice ?? null,
    adjustment,
  };
}

function line(
  quantity: number,
  properties: PriceLine['properties'] = {},
  variantId?: string | null,
): PriceLine {
  return variantId === undefined ? { quantity, properties } : { quantity, properties, variantId };
}

function priced(e: PriceEntry, l: PriceLine): { unitPrice: string; trace: PriceTrace } {
  const result = priceUnit(e, l);
  if (!result.ok) assert.fail(`expected a price, got ${result.code}: ${result.message}`);
  return { unitPrice: result.unitPrice.toString(), trace: result.trace };
}

function failure(e: PriceEntry, l: PriceLine): string {
  const result = priceUnit(e, l);
  if (result.ok) assert.fail(`expected no price, got ${result.unitPrice.toString()}`);
  assert.ok(result.message.length > 0);
  return result.code;
}

function violations(adj: Adjustment): [string, string][] {
  return validateAdjustment(adj).map((v) => [v.code, v.pointer]);
}

describe('Adjustment schema', () => {
  const valid: unknown[] = [
    { type: 'override', amount: 0 },
    { type: 'percent', amount: -25, allowUnitPriceEditing: true },
    { type: 'volume', tiers: [{ firstUnit: 0, lastUnit: null, unitPrice: 1 }] },
    { type: 'volume', tiers: [{ firstUnit: 0, unitPrice: 1 }] },
    { type: 'enum', property: 'color', values: [{ value: 'red', unitPrice: 1 }] },
    { type: 'range', property: 'length', values: [{ firstUnit: 0, lastUnit: 1.5, unitPrice: 1 }] },
    { type: 'variant', values: [{ value: 'v-1', unitPrice: 1 }] },
    { type: 'override', amount: 999_999_999_999_999.9 },
    { type: 'percent', amount: -1000 },
    { type: 'percent', amount: 100 },
  ];
  for (const adj of valid) {
    it(`accepts ${JSON.stringify(adj)}`, () => assert.ok(Value.Check(Adjustment, adj)));
  }

  const invalid: unknown[] = [
    { type: 'override', amount: -1 },
    { type: 'percent', amount: 100.5 },
    { type: 'percent', amount: 10, extra: true },
    { type: 'discount', amount: 10 },
    { type: null, amount: 10 },
    { amount: 10 },
    { type: 'volume', tiers: [] },
    { type: 'volume', tiers: [{ firstUnit: -1, unitPrice: 1 }] },
    { type: 'volume', tiers: [{ firstUnit: 0, unitPrice: -1 }] },
    { type: 'volume', tiers: [{ firstUnit: 0, unitPrice: 1, note: 'x' }] },
    { type: 'enum', values: [{ value: 'red', unitPrice: 1 }] },
    { type: 'range', property: 'length', values: [{ firstUnit: 0, unitPrice: 1 }] },
    { type: 'variant', values: [{ value: 'v-1', unitPrice: '1' }] },
    { type: 'override', amount: 1, allowUnitPriceEditing: 'yes' },
    { type: 'override', amount: 1e15 },
    { type: 'percent', amount: -1000.000001 },
    { type: 'volume', tiers: [{ firstUnit: 0, unitPrice: 1e15 }] },
    { type: 'variant', values: [{ value: 'v-1', unitPrice: 1e300 }] },
  ];
  for (const adj of invalid) {
    it(`rejects ${JSON.stringify(adj)}`, () => assert.equal(Value.Check(Adjustment, adj), false));
  }
});

describe('validateAdjustment', () => {
  it('accepts a well-formed adjustment of each type', () => {
    const good: Adjustment[] = [
      { type: 'override', amount: 12.123456 },
      { type: 'percent', amount: -7.5 },
      {
        type: 'volume',
        tiers: [
          { firstUnit: 1, lastUnit: 10, unitPrice: 5 },
          { firstUnit: 11, lastUnit: 100, unitPrice: 4.5 },
          { firstUnit: 101, unitPrice: 4 },
        ],
      },
      { type: 'volume', tiers: [{ firstUnit: 0, lastUnit: 9, unitPrice: 1 }] },
      {
        type: 'enum',
        property: 'color',
        values: [
          { value: 'red', unitPrice: 1 },
          { value: 'Red', unitPrice: 2 },
        ],
      },
      {
        type: 'range',
        property: 'length',
        values: [
          { firstUnit: 10, lastUnit: 20, unitPrice: 2 },
          { firstUnit: 0, lastUnit: 9.99, unitPrice: 1 },
          { firstUnit: 5000, lastUnit: 5000, unitPrice: 3 },
        ],
      },
      {
        type: 'variant',
        values: [
          { value: 'v-1', unitPrice: 1 },
          { value: 'v-2', unitPrice: 2 },
        ],
      },
    ];
    for (const adj of good) assert.deepEqual(validateAdjustment(adj), [], JSON.stringify(adj));
  });

  it('limits money to 6 decimal places', () => {
    assert.deepEqual(violations({ type: 'override', amount: 1.0000001 }), [['too_many_decimals', '/amount']]);
    assert.deepEqual(violations({ type: 'percent', amount: 12.3456789 }), [['too_many_decimals', '/amount']]);
    assert.deepEqual(violations({ type: 'override', amount: 1e-7 }), [['too_many_decimals', '/amount']]);
    assert.deepEqual(violations({ type: 'override', amount: 0.1 + 0.2 }), [['too_many_decimals', '/amount']]);
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0, lastUnit: 9, unitPrice: 1 },
          { firstUnit: 10, lastUnit: 19, unitPrice: 1 },
          { firstUnit: 20, unitPrice: 0.1234567 },
        ],
      }),
      [['too_many_decimals', '/tiers/2/unitPrice']],
    );
    assert.deepEqual(
      violations({ type: 'enum', property: 'p', values: [{ value: 'a', unitPrice: 9.9999999 }] }),
      [['too_many_decimals', '/values/0/unitPrice']],
    );
    assert.deepEqual(
      violations({
        type: 'range',
        property: 'p',
        values: [{ firstUnit: 0, lastUnit: 1, unitPrice: 1.0000001 }],
      }),
      [['too_many_decimals', '/values/0/unitPrice']],
    );
    assert.deepEqual(violations({ type: 'variant', values: [{ value: 'a', unitPrice: 5e-7 }] }), [
      ['too_many_decimals', '/values/0/unitPrice'],
    ]);
  });

  it('reports a gap between tiers', () => {
    const adj: Adjustment = {
      type: 'volume',
      tiers: [
        { firstUnit: 0, lastUnit: 9, unitPrice: 2 },
        { firstUnit: 11, unitPrice: 1 },
      ],
    };
    assert.deepEqual(violations(adj), [['tier_gap', '/tiers/1/firstUnit']]);
  });

  it('reports overlapping and unsorted tiers', () => {
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0, lastUnit: 9, unitPrice: 2 },
          { firstUnit: 9, unitPrice: 1 },
        ],
      }),
      [['tier_overlap', '/tiers/1/firstUnit']],
    );
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 10, lastUnit: 19, unitPrice: 1 },
          { firstUnit: 0, lastUnit: 9, unitPrice: 2 },
        ],
      }),
      [['tier_overlap', '/tiers/1/firstUnit']],
    );
  });

  it('allows only the last tier to be open', () => {
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0, lastUnit: null, unitPrice: 2 },
          { firstUnit: 10, lastUnit: 19, unitPrice: 1 },
          { firstUnit: 20, unitPrice: 1 },
        ],
      }),
      [['open_tier_not_last', '/tiers/0/lastUnit']],
    );
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0, lastUnit: 9, unitPrice: 2 },
          { firstUnit: 10, unitPrice: 1 },
          { firstUnit: 20, unitPrice: 1 },
        ],
      }),
      [['open_tier_not_last', '/tiers/1']],
    );
  });

  it('reports an inverted tier, fractional units and a negative start', () => {
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0, lastUnit: 9, unitPrice: 2 },
          { firstUnit: 10, lastUnit: 5, unitPrice: 1 },
        ],
      }),
      [['tier_inverted', '/tiers/1/lastUnit']],
    );
    assert.deepEqual(
      violations({
        type: 'volume',
        tiers: [
          { firstUnit: 0.5, lastUnit: 9.5, unitPrice: 2 },
          { firstUnit: 10.5, unitPrice: 1 },
        ],
      }),
      [
        ['not_integer', '/tiers/0/firstUnit'],
        ['not_integer', '/tiers/0/lastUnit'],
        ['not_integer', '/tiers/1/firstUnit'],
      ],
    );
    assert.deepEqual(violations({ type: 'volume', tiers: [{ firstUnit: -1, unitPrice: 2 }] }), [
      ['negative_first_unit', '/tiers/0/firstUnit'],
    ]);
  });

  it('requires at least one tier or value', () => {
    assert.deepEqual(violations({ type: 'volume', tiers: [] }), [['empty_tiers', '/tiers']]);
    assert.deepEqual(violations({ type: 'enum', property: 'p', values: [] }), [['empty_values', '/values']]);
    assert.deepEqual(violations({ type: 'range', property: 'p', values: [] }), [['empty_values', '/values']]);
    assert.deepEqual(violations({ type: 'variant', values: [] }), [['empty_values', '/values']]);
  });

  it('reports an inverted range', () => {
    assert.deepEqual(
      violations({ type: 'range', property: 'p', values: [{ firstUnit: 5, lastUnit: 4.9, unitPrice: 1 }] }),
      [['range_inverted', '/values/0/lastUnit']],
    );
  });

  it('reports overlapping ranges whatever their order', () => {
    const a = { firstUnit: 0, lastUnit: 10, unitPrice: 1 };
    const b = { firstUnit: 5, lastUnit: 15, unitPrice: 2 };
    assert.deepEqual(violations({ type: 'range', property: 'p', values: [a, b] }), [
      ['range_overlap', '/values/1'],
    ]);
    assert.deepEqual(violations({ type: 'range', property: 'p', values: [b, a] }), [
      ['range_overlap', '/values/0'],
    ]);
  });

  it('treats ranges sharing an end point as overlapping, since both ends are inclusive', () => {
    const values = [
      { firstUnit: 10, lastUnit: 20, unitPrice: 2 },
      { firstUnit: 0, lastUnit: 10, unitPrice: 1 },
    ];
    assert.deepEqual(violations({ type: 'range', property: 'p', values }), [['range_overlap', '/values/0']]);
  });

  it('reports every range inside a wider one', () => {
    const values = [
      { firstUnit: 30, lastUnit: 40, unitPrice: 3 },
      { firstUnit: 0, lastUnit: 100, unitPrice: 1 },
      { firstUnit: 10, lastUnit: 20, unitPrice: 2 },
      { firstUnit: 200, lastUnit: 300, unitPrice: 4 },
    ];
    assert.deepEqual(violations({ type: 'range', property: 'p', values }), [
      ['range_overlap', '/values/2'],
      ['range_overlap', '/values/0'],
    ]);
  });

  it('reports duplicate enum values and variant ids at the repeat', () => {
    const values = [
      { value: 'a', unitPrice: 1 },
      { value: 'b', unitPrice: 2 },
      { value: 'a', unitPrice: 3 },
      { value: 'a', unitPrice: 4 },
    ];
    const expected = [
      ['duplicate_value', '/values/2/value'],
      ['duplicate_value', '/values/3/value'],
    ];
    assert.deepEqual(violations({ type: 'enum', property: 'p', values }), expected);
    assert.deepEqual(violations({ type: 'variant', values }), expected);
  });

  it('lists every violation, each with a message', () => {
    const result = validateAdjustment({
      type: 'volume',
      tiers: [
        { firstUnit: 1, lastUnit: 5, unitPrice: 1.23456789 },
        { firstUnit: 7, lastUnit: null, unitPrice: 1 },
        { firstUnit: 8, unitPrice: 1 },
      ],
    });
    assert.deepEqual(
      result.map((v) => [v.code, v.pointer]),
      [
        ['too_many_decimals', '/tiers/0/unitPrice'],
        ['open_tier_not_last', '/tiers/1/lastUnit'],
        ['tier_gap', '/tiers/1/firstUnit'],
      ],
    );
    for (const v of result) assert.ok(v.message.length > 0);
  });
});

describe('priceUnit without an adjustment', () => {
  it('takes the list price before the standard price', () => {
    const result = priced(entry(null, { listPrice: '9.5', standardPrice: '10' }), line(1));
    assert.deepEqual(result, { unitPrice: '9.5', trace: { adjustmentType: null, basis: 'listPrice' } });
  });

  it('falls back to the standard price', () => {
    const result = priced(entry(null, { standardPrice: '10' }), line(1));
    assert.deepEqual(result, { unitPrice: '10', trace: { adjustmentType: null, basis: 'standardPrice' } });
  });

  it('cannot price without either', () => {
    assert.equal(failure(entry(null), line(1)), 'no_price');
  });
});

describe('priceUnit override', () => {
  it('uses the amount whatever the base', () => {
    assert.deepEqual(priced(entry({ type: 'override', amount: 7.25 }, { listPrice: '10' }), line(3)), {
      unitPrice: '7.25',
      trace: { adjustmentType: 'override', basis: 'override' },
    });
    assert.equal(priced(entry({ type: 'override', amount: 0 }), line(1)).unitPrice, '0');
  });
});

describe('priceUnit percent', () => {
  const percent = (amount: number, prices: { listPrice?: string; standardPrice?: string }) =>
    priced(entry({ type: 'percent', amount }, prices), line(1));

  it('takes a discount off the list price', () => {
    assert.deepEqual(percent(10, { listPrice: '100', standardPrice: '200' }), {
      unitPrice: '90',
      trace: {
        adjustmentType: 'percent',
        basis: 'percent',
        base: { source: 'listPrice', price: 100 },
        percent: 10,
      },
    });
  });

  it('takes a discount off the standard price when there is no list price', () => {
    const result = percent(25, { standardPrice: '80' });
    assert.equal(result.unitPrice, '60');
    assert.deepEqual(result.trace.base, { source: 'standardPrice', price: 80 });
  });

  it('treats a negative amount as a markup', () => {
    assert.equal(percent(-15, { listPrice: '100' }).unitPrice, '115');
    assert.equal(percent(-100, { listPrice: '19.99' }).unitPrice, '39.98');
  });

  it('gives zero at 100 percent and the base at 0 percent', () => {
    assert.equal(percent(100, { listPrice: '19.99' }).unitPrice, '0');
    assert.equal(percent(0, { listPrice: '19.99' }).unitPrice, '19.99');
  });

  it('rounds the unit price half up to 6 places', () => {
    assert.equal(percent(10, { listPrice: '33.333333' }).unitPrice, '30');
    assert.equal(percent(33.333333, { listPrice: '100' }).unitPrice, '66.666667');
    assert.equal(percent(50, { listPrice: '1.000001' }).unitPrice, '0.500001');
    assert.equal(percent(12.5, { listPrice: '19.99' }).unitPrice, '17.49125');
    assert.equal(percent(70, { listPrice: '0.1' }).unitPrice, '0.03');
  });

  it('cannot price without a base', () => {
    assert.equal(failure(entry({ type: 'percent', amount: 10 }), line(1)), 'no_price');
  });
});

describe('priceUnit volume', () => {
  const volume: Adjustment = {
    type: 'volume',
    tiers: [
      { firstUnit: 1, lastUnit: 10, unitPrice: 5 },
      { firstUnit: 11, lastUnit: 100, unitPrice: 4.5 },
      { firstUnit: 101, lastUnit: null, unitPrice: 4 },
    ],
  };
  const cases: [number, string, number, number | null][] = [
    [1, '5', 1, 10],
    [10, '5', 1, 10],
    [11, '4.5', 11, 100],
    [100, '4.5', 11, 100],
    [101, '4', 101, null],
    [1_000_000, '4', 101, null],
  ];
  for (const [quantity, unitPrice, firstUnit, lastUnit] of cases) {
    it(`prices quantity ${quantity} from tier ${firstUnit}..${lastUnit ?? ''}`, () => {
      assert.deepEqual(priced(entry(volume, { listPrice: '6' }), line(quantity)), {
        unitPrice,
        trace: { adjustmentType: 'volume', basis: 'tier', tier: { firstUnit, lastUnit } },
      });
    });
  }

  it('treats an absent lastUnit as open', () => {
    const adj: Adjustment = { type: 'volume', tiers: [{ firstUnit: 0, unitPrice: 3 }] };
    assert.deepEqual(priced(entry(adj), line(0)).trace.tier, { firstUnit: 0, lastUnit: null });
    assert.equal(priced(entry(adj), line(1e9)).unitPrice, '3');
  });

  it('finds no tier below the first or past a closed last tier', () => {
    assert.equal(failure(entry(volume, { listPrice: '6' }), line(0)), 'no_matching_tier');
    const closed: Adjustment = { type: 'volume', tiers: [{ firstUnit: 1, lastUnit: 10, unitPrice: 5 }] };
    assert.equal(failure(entry(closed), line(11)), 'no_matching_tier');
  });

  it('applies the tier price to every unit', () => {
    const result = priceUnit(entry(volume), line(11));
    assert.ok(result.ok);
    assert.equal(lineTotal(result.unitPrice, 11, 'USD').toString(), '49.5');
  });
});

describe('priceUnit enum', () => {
  const adj: Adjustment = {
    type: 'enum',
    property: 'color',
    values: [
      { value: 'red', unitPrice: 10 },
      { value: 'blue', unitPrice: 12.5 },
    ],
  };

  it('prices the value of the property', () => {
    assert.deepEqual(priced(entry(adj), line(1, { color: 'blue', size: 'L' })), {
      unitPrice: '12.5',
      trace: { adjustmentType: 'enum', basis: 'value', property: 'color', value: 'blue' },
    });
  });

  it('finds no price for an unknown, differently cased, null or missing value', () => {
    const misses: PriceLine['properties'][] = [
      { color: 'green' },
      { color: 'Red' },
      { color: null },
      {},
      { size: 'red' },
    ];
    for (const properties of misses) {
      assert.equal(failure(entry(adj, { listPrice: '1' }), line(1, properties)), 'no_matching_value');
    }
  });
});

describe('priceUnit range', () => {
  const adj: Adjustment = {
    type: 'range',
    property: 'length',
    values: [
      { firstUnit: 10, lastUnit: 20, unitPrice: 2 },
      { firstUnit: 0, lastUnit: 9.5, unitPrice: 1 },
    ],
  };
  const inRange: [string, string, number, number][] = [
    ['0', '1', 0, 9.5],
    ['9.5', '1', 0, 9.5],
    ['10', '2', 10, 20],
    ['20', '2', 10, 20],
    ['20.000', '2', 10, 20],
    ['1e1', '2', 10, 20],
    ['+15', '2', 10, 20],
  ];
  for (const [value, unitPrice, firstUnit, lastUnit] of inRange) {
    it(`prices ${value} from ${firstUnit}..${lastUnit}`, () => {
      assert.deepEqual(priced(entry(adj), line(1, { length: value })), {
        unitPrice,
        trace: {
          adjustmentType: 'range',
          basis: 'range',
          property: 'length',
          value,
          range: { firstUnit, lastUnit },
        },
      });
    });
  }

  it('compares exactly in decimal', () => {
    const narrow: Adjustment = {
      type: 'range',
      property: 'x',
      values: [{ firstUnit: 0.1, lastUnit: 0.3, unitPrice: 7 }],
    };
    assert.equal(priced(entry(narrow), line(1, { x: '0.3' })).unitPrice, '7');
    assert.equal(priced(entry(narrow), line(1, { x: '0.1' })).unitPrice, '7');
    assert.equal(failure(entry(narrow), line(1, { x: '0.30000000000000004' })), 'no_matching_range');
    assert.equal(failure(entry(narrow), line(1, { x: '0.0999999999999999999' })), 'no_matching_range');
  });

  it('ignores surrounding spaces in the value', () => {
    assert.equal(priced(entry(adj), line(1, { length: ' 15 ' })).trace.value, '15');
  });

  it('finds no range for a value outside every range, non-numeric, null or missing', () => {
    const misses = ['9.7', '20.000001', '-1', 'abc', '', '0x10', '1,5', 'NaN', 'Infinity', '12 m'];
    for (const length of misses) {
      assert.equal(failure(entry(adj, { listPrice: '1' }), line(1, { length })), 'no_matching_range', length);
    }
    assert.equal(failure(entry(adj), line(1, { length: null })), 'no_matching_range');
    assert.equal(failure(entry(adj), line(1, {})), 'no_matching_range');
  });
});

describe('priceUnit variant', () => {
  const adj: Adjustment = {
    type: 'variant',
    values: [
      { value: 'shirt-red-L', unitPrice: 20 },
      { value: 'shirt-blue-M', unitPrice: 18.75 },
    ],
  };

  it('prices the chosen variant', () => {
    assert.deepEqual(priced(entry(adj), line(2, {}, 'shirt-blue-M')), {
      unitPrice: '18.75',
      trace: { adjustmentType: 'variant', basis: 'variant', value: 'shirt-blue-M' },
    });
  });

  it('finds no price for an unknown variant', () => {
    assert.equal(failure(entry(adj, { listPrice: '1' }), line(1, {}, 'shirt-red-S')), 'no_matching_variant');
  });

  it('needs a variant to be chosen', () => {
    assert.equal(failure(entry(adj, { listPrice: '1' }), line(1, {})), 'variant_required');
    assert.equal(failure(entry(adj, { listPrice: '1' }), line(1, {}, null)), 'variant_required');
  });
});

describe('unit price to line total by currency', () => {
  it('rounds to 0, 2 and 3 minor units', () => {
    const adj: Adjustment = { type: 'percent', amount: 12.5 };
    const cases: [string, string, number, string][] = [
      ['JPY', '1999', 3, '5247'],
      ['USD', '19.99', 3, '52.47'],
      ['KWD', '1.999', 3, '5.247'],
    ];
    for (const [currency, listPrice, quantity, total] of cases) {
      const result = priceUnit(entry(adj, { currency, listPrice }), line(quantity));
      assert.ok(result.ok);
      assert.equal(lineTotal(result.unitPrice, quantity, currency).toString(), total, currency);
    }
  });

  it('keeps the JSON trace free of decimal objects', () => {
    const result = priceUnit(entry({ type: 'percent', amount: 5 }, { listPrice: '10' }), line(1));
    assert.ok(result.ok);
    assert.deepEqual(JSON.parse(JSON.stringify(result.trace)), result.trace);
  });
});

describe('priceUnit and lineTotal where binary floating point drifts', () => {
  const total = (adj: Adjustment | null, quantity: number, prices: { listPrice?: string } = {}) => {
    const result = priceUnit(entry(adj, prices), line(quantity));
    assert.ok(result.ok);
    return [result.unitPrice.toString(), lineTotal(result.unitPrice, quantity, 'USD').toString()];
  };

  it('prices exactly what a double would get wrong', () => {
    // 1.1 * 0.9 = 0.9900000000000001, 0.1 * 3 = 0.30000000000000004, 0.07 * 100 = 7.000000000000001,
    // 1.005 * 100 = 100.49999999999999 (rounding down to 1.00).
    assert.notEqual(1.1 * 0.9, 0.99);
    assert.deepEqual(total({ type: 'percent', amount: 10 }, 1, { listPrice: '1.1' }), ['0.99', '0.99']);
    assert.deepEqual(total({ type: 'volume', tiers: [{ firstUnit: 0, unitPrice: 0.1 }] }, 3), ['0.1', '0.3']);
    const enumAdj: Adjustment = { type: 'enum', property: 'p', values: [{ value: 'a', unitPrice: 0.07 }] };
    const result = priceUnit(entry(enumAdj), line(100, { p: 'a' }));
    assert.ok(result.ok);
    assert.equal(lineTotal(result.unitPrice, 100, 'USD').toString(), '7');
    assert.deepEqual(total({ type: 'override', amount: 1.005 }, 1), ['1.005', '1.01']);
  });
});
