import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { currencyCodes, isCurrency, minorUnits } from '../../src/pricing/currencies.ts';
import {
  decimalPlaces,
  lineTotal,
  MAX_PRICE_DECIMALS,
  QuoteTotals,
  roundUnitPrice,
  sumTotals,
  toDecimal,
  toJsonNumber,
} from '../../src/pricing/money.ts';

describe('currencies', () => {
  it('gives ISO 4217 minor units', () => {
    const expected: Record<string, number> = {
      JPY: 0,
      ISK: 0,
      KRW: 0,
      VND: 0,
      XAF: 0,
      XOF: 0,
      XPF: 0,
      UGX: 0,
      CLP: 0,
      UYI: 0,
      USD: 2,
      EUR: 2,
      GBP: 2,
      CHF: 2,
      MGA: 2,
      XCG: 2,
      ZWG: 2,
      SLE: 2,
      VES: 2,
      VED: 2,
      KWD: 3,
      BHD: 3,
      JOD: 3,
      OMR: 3,
      TND: 3,
      LYD: 3,
      IQD: 3,
      CLF: 4,
      UYW: 4,
    };
    for (const [code, units] of Object.entries(expected)) {
      assert.equal(minorUnits(code), units, code);
    }
  });

  it('rejects codes without a minor unit, withdrawn codes and other strings', () => {
    const rejected = ['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XSU', 'XUA', 'XBA', 'XTS', 'XXX'];
    rejected.push('HRK', 'ANG', 'ZWL', 'SLL', 'CUC', 'usd', 'US', 'USDX', '', 'constructor', 'toString');
    for (const code of rejected) {
      assert.equal(isCurrency(code), false, code);
      assert.throws(() => minorUnits(code), RangeError, code);
    }
  });

  it('lists every code once, sorted, as three upper-case letters', () => {
    assert.equal(currencyCodes.length, 165);
    assert.deepEqual([...currencyCodes].sort(), currencyCodes);
    assert.equal(new Set(currencyCodes).size, currencyCodes.length);
    for (const code of currencyCodes) {
      assert.match(code, /^[A-Z]{3}$/);
      assert.ok(isCurrency(code));
    }
    assert.ok(Object.isFrozen(currencyCodes));
  });
});

describe('toDecimal', () => {
  it('takes numbers by their shortest round-trip string', () => {
    assert.equal(toDecimal(0.1).toString(), '0.1');
    assert.equal(toDecimal(19.99).toString(), '19.99');
    assert.equal(toDecimal(0.1 + 0.2).toString(), '0.30000000000000004');
    assert.equal(toDecimal(1e-7).toString(), '0.0000001');
    assert.equal(toDecimal(1e21).toString(), '1000000000000000000000');
  });

  it('adds decimal strings exactly', () => {
    assert.equal(toDecimal('0.1').plus(toDecimal('0.2')).toString(), '0.3');
  });

  it('rejects what is not a finite decimal, every time it is asked', () => {
    for (let i = 0; i < 2; i++) {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 'Infinity', 'NaN', 'abc', '']) {
        assert.throws(() => toDecimal(bad), String(bad));
      }
      assert.throws(() => toDecimal(toDecimal('1').div(0)), 'a Decimal that is not finite');
    }
  });

  it('parses a text once: the same text, or a Decimal, gives the same Decimal, which nothing changes', () => {
    const price = toDecimal('19.99');
    assert.equal(toDecimal('19.99'), price);
    assert.equal(toDecimal(price), price);
    assert.equal(toDecimal(19.99), price, 'a number by its shortest string');
    assert.equal(price.plus(1).toString(), '20.99');
    assert.equal(toDecimal('19.99').toString(), '19.99');
  });

  it('leaves the global decimal.js configuration alone', () => {
    assert.equal(Decimal.precision, 20);
    assert.equal(Decimal.toExpNeg, -7);
  });
});

describe('decimalPlaces', () => {
  const cases: [number, number][] = [
    [0, 0],
    [12, 0],
    [1.5, 1],
    [19.99, 2],
    [1.000001, 6],
    [1.0000001, 7],
    [1e-7, 7],
    [1.5e-7, 8],
    [1e21, 0],
    [1.2345e25, 0],
    [-0.25, 2],
    [0.1 + 0.2, 17],
  ];
  for (const [value, places] of cases) {
    it(`counts ${places} for ${value}`, () => assert.equal(decimalPlaces(value), places));
  }
  it('sets the stored price limit at 6', () => assert.equal(MAX_PRICE_DECIMALS, 6));
});

describe('roundUnitPrice', () => {
  it('rounds half up to 6 places', () => {
    assert.equal(roundUnitPrice(toDecimal('1.0000005')).toString(), '1.000001');
    assert.equal(roundUnitPrice(toDecimal('1.00000049')).toString(), '1');
    assert.equal(roundUnitPrice(toDecimal('0.5000005')).toString(), '0.500001');
    assert.equal(roundUnitPrice(toDecimal('29.9999997')).toString(), '30');
  });

  it('rounds a half away from zero for negative values', () => {
    assert.equal(roundUnitPrice(toDecimal('-1.0000005')).toString(), '-1.000001');
  });
});

describe('lineTotal', () => {
  const cases: [string, number, string, string][] = [
    ['1.005', 1, 'USD', '1.01'],
    ['19.99', 3, 'USD', '59.97'],
    ['0.1', 3, 'USD', '0.3'],
    ['0.333333', 3, 'USD', '1'],
    ['0.005', 1, 'USD', '0.01'],
    ['0.004999', 1, 'USD', '0'],
    ['1234.5', 1, 'JPY', '1235'],
    ['0.5', 1, 'JPY', '1'],
    ['0.49', 1, 'JPY', '0'],
    ['99.99', 7, 'JPY', '700'],
    ['1.2345', 1, 'KWD', '1.235'],
    ['1.2344', 1, 'KWD', '1.234'],
    ['0.3333335', 3, 'KWD', '1'],
    ['0.000125', 3, 'KWD', '0'],
    ['0.00005', 1, 'CLF', '0.0001'],
    ['2.5', 0, 'USD', '0'],
  ];
  for (const [unit, quantity, currency, total] of cases) {
    it(`${unit} x ${quantity} ${currency} = ${total}`, () => {
      assert.equal(lineTotal(toDecimal(unit), quantity, currency).toString(), total);
    });
  }

  it('is exact where binary floating point drifts', () => {
    assert.notEqual(1.005 * 100, 100.5);
    assert.equal(lineTotal(toDecimal(1.005), 1, 'USD').toString(), '1.01');
    assert.equal(lineTotal(toDecimal(0.1 + 0.2), 1, 'USD').toString(), '0.3');
  });

  it('computes with a global decimal.js value at full precision', () => {
    assert.equal(
      lineTotal(new Decimal('123456789012345.125'), 1000000, 'USD').toString(),
      '123456789012345125000',
    );
  });

  it('throws on an unknown currency', () => {
    assert.throws(() => lineTotal(toDecimal(1), 1, 'XAU'), RangeError);
  });

  it('stays exact at the largest unit price and quantity a quote allows', () => {
    // The largest percent unit price: just under 10^15 marked up by 1000 %, times 10^15 - 1 units.
    const unit = roundUnitPrice(toDecimal('999999999999999.999999').times(1100).div(100));
    assert.equal(unit.toString(), '10999999999999999.999989');
    assert.equal(lineTotal(unit, 999_999_999_999_999, 'KWD').toString(), '10999999999999988999989000000000');
  });

  it('refuses a product it could not compute exactly rather than round it silently', () => {
    assert.throws(
      () => lineTotal(toDecimal('123456789012345678901234567890.123456'), 999_999_999, 'USD'),
      RangeError,
    );
  });
});

describe('sumTotals', () => {
  it('adds rounded lines exactly', () => {
    const lines = ['0.1', '0.2', '59.97'].map((s) => toDecimal(s));
    assert.equal(sumTotals(lines, 'USD').toString(), '60.27');
  });

  it('is zero with no lines', () => {
    assert.equal(sumTotals([], 'JPY').toString(), '0');
  });

  it('refuses a line that is not rounded to the currency', () => {
    assert.throws(() => sumTotals([toDecimal('1.5')], 'JPY'), RangeError);
    assert.throws(() => sumTotals([toDecimal('1.005')], 'USD'), RangeError);
    assert.equal(sumTotals([toDecimal('1.005')], 'KWD').toString(), '1.005');
  });

  it('throws on an unknown currency', () => {
    assert.throws(() => sumTotals([], 'ZZZ'), RangeError);
  });
});

describe('toJsonNumber', () => {
  it('gives the nearest JSON number', () => {
    assert.equal(toJsonNumber(toDecimal('0.1').plus(toDecimal('0.2'))), 0.3);
    assert.equal(toJsonNumber(toDecimal('59.97')), 59.97);
    assert.equal(toJsonNumber(toDecimal('0.0000001')), 1e-7);
    assert.equal(toJsonNumber(toDecimal('-0')), 0);
  });
});

describe('QuoteTotals', () => {
  const totalsOf = (currency: string, lines: [string, number][]) => {
    const totals = new QuoteTotals(currency);
    const each = lines.map(([unit, quantity]) => totals.add(toDecimal(unit), quantity));
    return { each, total: totals.total() };
  };

  it('rounds a tie away from zero, as decimal.js ROUND_HALF_UP', () => {
    assert.deepEqual(
      totalsOf('USD', [
        ['0.125', 1],
        ['-0.125', 1],
        ['0.124999', 1],
        ['-0.000005', 1000],
      ]),
      {
        each: [0.13, -0.13, 0.12, -0.01],
        total: 0.11,
      },
    );
    assert.deepEqual(
      totalsOf('JPY', [
        ['0.5', 3],
        ['-2.5', 1],
      ]),
      { each: [2, -3], total: -1 },
    );
    // Found by the property's committed seed: a negative price x 0 is 0, as in decimals, not -0.
    assert.deepEqual(totalsOf('KWD', [['-0.005', 0]]), { each: [0], total: 0 });
  });

  it('stays exact on both sides of 2^53 minor units, for a line and for the sum', () => {
    const safe = Number.MAX_SAFE_INTEGER; // 2^53 - 1
    // The line lands on the last safe integer, then one more cent passes it: decimals take the sum from there.
    const { each, total } = totalsOf('USD', [
      [toScaledCents(safe), 1],
      ['0.01', 1],
      ['0.01', 2],
    ]);
    assert.deepEqual(each, [safe / 100, 0.01, 0.02]);
    assert.equal(total, Number('90071992547409.94'));
    // A product past 2^53 is worked out in decimals; JSON numbers are the closest doubles of the exact totals.
    assert.deepEqual(totalsOf('KWD', [['9007199254.740993', 1000]]), {
      each: [Number('9007199254740.993')],
      total: Number('9007199254740.993'),
    });
    assert.deepEqual(totalsOf('USD', [['123456789012345.678901', 3]]).each, [Number('370370367037037.04')]);
  });

  it('takes a fractional quantity, and a price of more decimals than the currency, through decimals', () => {
    assert.deepEqual(
      totalsOf('USD', [
        ['19.99', 1.5],
        ['0.333333', 3],
      ]),
      { each: [29.99, 1], total: 30.99 },
    );
  });
});

function toScaledCents(cents: number): string {
  const text = String(cents);
  return `${text.slice(0, -2)}.${text.slice(-2)}`;
}
