import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Adjustment } from '../../src/pricing/adjustment.schema.ts';
import { priceUnit, validateAdjustment } from '../../src/pricing/adjustments.ts';
import { currencyCodes, minorUnits } from '../../src/pricing/currencies.ts';
import {
  type Decimal,
  lineTotal,
  QuoteTotals,
  sumTotals,
  toDecimal,
  toJsonNumber,
} from '../../src/pricing/money.ts';
import { propertySettings } from '../helpers/random.ts';

// Committed: npm test draws the same cases every run; npm run fuzz explores other seeds (propertySettings).
const SEED = 20261127;
const RUNS = propertySettings(SEED, 300);

// The oracle works on non-negative integers scaled by 10^6, with BigInt only, so it shares nothing
// with the decimal.js code under test.
const PRICE_SCALE = 6;

function toScaledString(value: bigint, places: number): string {
  const digits = value.toString().padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

function divideHalfUp(numerator: bigint, divisor: bigint): bigint {
  const quotient = numerator / divisor;
  return 2n * (numerator % divisor) >= divisor ? quotient + 1n : quotient;
}

function oracleLineTotal(scaledUnit: bigint, quantity: number, currency: string): bigint {
  const places = minorUnits(currency);
  return divideHalfUp(scaledUnit * BigInt(quantity), 10n ** BigInt(PRICE_SCALE - places));
}

// Up to 10 million with 6 decimals: at most 14 significant digits, so the JSON number path
// (String(Number(text))) gives back the same decimal text. Random digits almost never land on a tie,
// so half the prices end in a 5 followed by zeros, where half-up and half-even rounding part ways.
const scaledPrice = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 13n }),
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 6n }), fc.constantFrom(1n, 10n, 100n, 1000n, 10000n, 100000n))
    .map(([whole, place]) => whole * place * 10n + 5n * place),
);
const quantity = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 1_000_000 }));
const currency = fc.oneof(fc.constantFrom('JPY', 'USD', 'KWD', 'CLF'), fc.constantFrom(...currencyCodes));

describe('line totals', () => {
  it('equal the half-up rounding of the exact unit price x quantity', () => {
    fc.assert(
      fc.property(scaledPrice, quantity, currency, fc.boolean(), (unit, q, code, asNumber) => {
        const text = toScaledString(unit, PRICE_SCALE);
        const total = lineTotal(toDecimal(asNumber ? Number(text) : text), q, code);
        const places = minorUnits(code);
        assert.equal(total.toFixed(places), toScaledString(oracleLineTotal(unit, q, code), places));
      }),
      RUNS,
    );
  });

  it('sum to the quote total', () => {
    const line = fc.record({ unit: scaledPrice, q: quantity });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), currency, (lines, code) => {
        const places = minorUnits(code);
        const totals = lines.map(({ unit, q }) =>
          lineTotal(toDecimal(toScaledString(unit, PRICE_SCALE)), q, code),
        );
        const expected = lines.reduce((sum, { unit, q }) => sum + oracleLineTotal(unit, q, code), 0n);
        const total = sumTotals(totals, code);
        assert.equal(total.toFixed(places), toScaledString(expected, places));
        assert.ok(total.equals(totals.reduce((a, b) => a.plus(b), toDecimal(0))));
      }),
      RUNS,
    );
  });
});

describe('quote totals in whole minor units', () => {
  // Prices of either sign, from cents to past 2^53 units, of up to 6 decimals as stored and of up to 30 (past the
  // exact powers of ten in a double), and quantities up to 10^15: lines inside and outside the exact double range,
  // and sums that leave it.
  const price = fc.oneof(
    scaledPrice.map((unit) => toScaledString(unit, PRICE_SCALE)),
    fc
      .record({
        digits: fc.bigInt({ min: 0n, max: 10n ** 21n - 1n }),
        scale: fc.integer({ min: 0, max: 30 }),
      })
      .map(({ digits, scale }) => toScaledString(digits, scale)),
  );
  const signedPrice = fc.tuple(price, fc.boolean()).map(([text, negative]) => (negative ? `-${text}` : text));
  const anyQuantity = fc.oneof(
    quantity,
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.constant(1e15),
  );

  it('equal lineTotal and sumTotals in decimals, line by line and summed', () => {
    const line = fc.record({ unit: signedPrice, q: anyQuantity });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), currency, (lines, code) => {
        const totals = new QuoteTotals(code);
        const decimals: Decimal[] = [];
        for (const { unit, q } of lines) {
          const exact = lineTotal(toDecimal(unit), q, code);
          decimals.push(exact);
          assert.equal(totals.add(toDecimal(unit), q), toJsonNumber(exact), `${unit} x ${q} ${code}`);
        }
        assert.equal(totals.total(), toJsonNumber(sumTotals(decimals, code)));
      }),
      RUNS,
    );
  });
});

describe('percent adjustment', () => {
  it('equals base x (100 - amount) / 100 rounded half up to 6 places', () => {
    // Amounts from -1000 (a markup) to 100 percent, with up to 6 decimals.
    const scaledPercent = fc.integer({ min: -1_000_000_000, max: 100_000_000 });
    fc.assert(
      fc.property(scaledPrice, scaledPercent, (base, percent) => {
        const amount = Number(percent) / 1e6;
        const result = priceUnit(
          {
            currency: 'USD',
            listPrice: toScaledString(base, PRICE_SCALE),
            standardPrice: null,
            adjustment: { type: 'percent', amount },
          },
          { quantity: 1, properties: {} },
        );
        assert.ok(result.ok);
        // base/10^6 x (100 - p/10^6)/100, in units of 10^-6, is base x (10^8 - p) / 10^8.
        const expected = divideHalfUp(base * (10n ** 8n - BigInt(percent)), 10n ** 8n);
        assert.equal(result.unitPrice.toFixed(PRICE_SCALE), toScaledString(expected, PRICE_SCALE));
      }),
      RUNS,
    );
  });
});

type Tier = { firstUnit: number; lastUnit?: number | null; unitPrice: number };

const contiguousTiers = fc
  .record({
    start: fc.integer({ min: 0, max: 5 }),
    lengths: fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 8 }),
    openLast: fc.boolean(),
    absentLast: fc.boolean(),
  })
  .map(({ start, lengths, openLast, absentLast }) => {
    let next = start;
    const tiers: Tier[] = lengths.map((length, i) => {
      const tier = { firstUnit: next, lastUnit: next + length - 1, unitPrice: i + 1 };
      next += length;
      return tier;
    });
    const last = tiers[tiers.length - 1];
    if (openLast && last !== undefined) {
      if (absentLast) delete last.lastUnit;
      else last.lastUnit = null;
    }
    return { tiers, start, end: next - 1, open: openLast };
  });

describe('volume adjustment', () => {
  it('prices every quantity that contiguous tiers cover, from the one tier holding it', () => {
    fc.assert(
      fc.property(contiguousTiers, ({ tiers, start, end, open }) => {
        const adjustment: Adjustment = { type: 'volume', tiers };
        assert.deepEqual(validateAdjustment(adjustment), []);
        const entry = { currency: 'USD', listPrice: null, standardPrice: null, adjustment };
        for (let q = 0; q <= end + 30; q++) {
          const result = priceUnit(entry, { quantity: q, properties: {} });
          const holding = tiers.filter((t) => t.firstUnit <= q && (t.lastUnit == null || q <= t.lastUnit));
          const covered = q >= start && (open || q <= end);
          assert.equal(holding.length, covered ? 1 : 0);
          if (!covered) {
            assert.deepEqual(result.ok ? 'priced' : result.code, 'no_matching_tier');
            continue;
          }
          assert.ok(result.ok);
          assert.equal(result.unitPrice.toString(), String(holding[0]?.unitPrice));
          assert.deepEqual(result.trace.tier, {
            firstUnit: holding[0]?.firstUnit,
            lastUnit: holding[0]?.lastUnit ?? null,
          });
        }
      }),
      propertySettings(SEED, 200),
    );
  });

  it('reports a tier whose start is moved off the previous end + 1', () => {
    const moved = contiguousTiers
      .filter(({ tiers }) => tiers.length >= 2)
      .chain(({ tiers }) =>
        fc.record({
          tiers: fc.constant(tiers),
          index: fc.integer({ min: 1, max: tiers.length - 1 }),
          shift: fc.integer({ min: -3, max: 3 }).filter((s) => s !== 0),
        }),
      );
    fc.assert(
      fc.property(moved, ({ tiers, index, shift }) => {
        const changed = tiers.map((t, i) => (i === index ? { ...t, firstUnit: t.firstUnit + shift } : t));
        const codes = validateAdjustment({ type: 'volume', tiers: changed })
          .filter((v) => v.pointer === `/tiers/${index}/firstUnit`)
          .map((v) => v.code);
        assert.ok(codes.includes(shift > 0 ? 'tier_gap' : 'tier_overlap'), JSON.stringify(codes));
      }),
      RUNS,
    );
  });
});

describe('range adjustment', () => {
  const ranges = fc.array(
    fc
      .record({ first: fc.integer({ min: 0, max: 50 }), length: fc.integer({ min: 0, max: 10 }) })
      .map(({ first, length }) => ({ firstUnit: first, lastUnit: first + length, unitPrice: 1 })),
    { minLength: 1, maxLength: 6 },
  );

  const disjointRanges = fc
    .array(fc.record({ gap: fc.integer({ min: 0, max: 5 }), length: fc.integer({ min: 0, max: 10 }) }), {
      minLength: 1,
      maxLength: 6,
    })
    .map((parts) => {
      let next = 0;
      return parts.map(({ gap, length }, i) => {
        const firstUnit = next + gap;
        next = firstUnit + length + 1;
        return { firstUnit, lastUnit: firstUnit + length, unitPrice: i + 1 };
      });
    });

  it('reports overlap exactly when two ranges share a value, whatever their order', () => {
    fc.assert(
      fc.property(ranges, fc.array(fc.integer(), { minLength: 6, maxLength: 6 }), (values, keys) => {
        const overlaps = values.some((a, i) =>
          values.some((b, j) => i !== j && a.firstUnit <= b.lastUnit && b.firstUnit <= a.lastUnit),
        );
        const shuffled = values
          .map((v, i) => ({ v, key: keys[i] ?? 0 }))
          .sort((a, b) => a.key - b.key)
          .map(({ v }) => v);
        const count = (vs: typeof values) =>
          validateAdjustment({ type: 'range', property: 'p', values: vs }).filter(
            (v) => v.code === 'range_overlap',
          ).length;
        assert.equal(count(values) > 0, overlaps);
        assert.equal(count(shuffled), count(values));
      }),
      RUNS,
    );
  });

  it('prices a value exactly when a valid range holds it', () => {
    fc.assert(
      fc.property(disjointRanges, fc.integer({ min: -5, max: 100 }), (values, v) => {
        const adjustment: Adjustment = { type: 'range', property: 'p', values };
        assert.deepEqual(validateAdjustment(adjustment), []);
        const result = priceUnit(
          { currency: 'USD', listPrice: null, standardPrice: null, adjustment },
          { quantity: 1, properties: { p: String(v) } },
        );
        const holding = values.find((r) => r.firstUnit <= v && v <= r.lastUnit);
        if (holding === undefined) {
          assert.equal(result.ok ? 'priced' : result.code, 'no_matching_range');
        } else {
          assert.ok(result.ok);
          assert.equal(result.unitPrice.toString(), String(holding.unitPrice));
          assert.deepEqual(result.trace.range, { firstUnit: holding.firstUnit, lastUnit: holding.lastUnit });
        }
      }),
      RUNS,
    );
  });
});
