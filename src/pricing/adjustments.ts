import type { Adjustment } from './adjustment.schema.ts';
import {
  type Decimal,
  decimalPlaces,
  MAX_PRICE_DECIMALS,
  roundUnitPrice,
  toDecimal,
  toJsonNumber,
} from './money.ts';

/** A rule broken inside one adjustment; `pointer` is a JSON Pointer relative to the adjustment. */
export type Violation = { code: string; pointer: string; message: string };

type Tier = Extract<Adjustment, { type: 'volume' }>['tiers'][number];
type PricedRange = Extract<Adjustment, { type: 'range' }>['values'][number];

function checkDecimals(value: number, pointer: string, out: Violation[]): void {
  if (decimalPlaces(value) > MAX_PRICE_DECIMALS) {
    out.push({
      code: 'too_many_decimals',
      pointer,
      message: `${value} has more than ${MAX_PRICE_DECIMALS} decimal places`,
    });
  }
}

function checkInteger(value: number, pointer: string, out: Violation[]): void {
  if (!Number.isInteger(value)) {
    out.push({ code: 'not_integer', pointer, message: `${value} is not a whole number of units` });
  }
}

function checkNotEmpty(items: readonly unknown[], code: string, pointer: string, out: Violation[]): void {
  if (items.length === 0) out.push({ code, pointer, message: 'at least one entry is required' });
}

function checkTiers(tiers: readonly Tier[], out: Violation[]): void {
  checkNotEmpty(tiers, 'empty_tiers', '/tiers', out);
  tiers.forEach((tier, i) => {
    const at = `/tiers/${i}`;
    checkInteger(tier.firstUnit, `${at}/firstUnit`, out);
    checkDecimals(tier.unitPrice, `${at}/unitPrice`, out);
    const last = tier.lastUnit ?? null;
    if (last === null) {
      if (i < tiers.length - 1) {
        out.push({
          code: 'open_tier_not_last',
          pointer: tier.lastUnit === null ? `${at}/lastUnit` : at,
          message: 'only the last tier may leave lastUnit open',
        });
      }
    } else {
      checkInteger(last, `${at}/lastUnit`, out);
      if (last < tier.firstUnit) {
        out.push({
          code: 'tier_inverted',
          pointer: `${at}/lastUnit`,
          message: `lastUnit ${last} is below firstUnit ${tier.firstUnit}`,
        });
      }
    }
    if (i === 0) {
      if (tier.firstUnit < 0) {
        out.push({
          code: 'negative_first_unit',
          pointer: `${at}/firstUnit`,
          message: 'the first tier must start at 0 or more',
        });
      }
      return;
    }
    const previousLast = tiers[i - 1]?.lastUnit ?? null;
    // An open previous tier is already reported as open_tier_not_last; there is no next unit to expect.
    if (previousLast === null) return;
    const expected = previousLast + 1;
    if (tier.firstUnit !== expected) {
      out.push({
        code: tier.firstUnit > expected ? 'tier_gap' : 'tier_overlap',
        pointer: `${at}/firstUnit`,
        message: `firstUnit must be ${expected}, the previous tier's lastUnit + 1, not ${tier.firstUnit}`,
      });
    }
  });
}

function checkRanges(ranges: readonly PricedRange[], out: Violation[]): void {
  checkNotEmpty(ranges, 'empty_values', '/values', out);
  const wellFormed: { range: PricedRange; index: number }[] = [];
  ranges.forEach((range, index) => {
    checkDecimals(range.unitPrice, `/values/${index}/unitPrice`, out);
    if (range.firstUnit > range.lastUnit) {
      out.push({
        code: 'range_inverted',
        pointer: `/values/${index}/lastUnit`,
        message: `lastUnit ${range.lastUnit} is below firstUnit ${range.firstUnit}`,
      });
    } else {
      wellFormed.push({ range, index });
    }
  });
  // Sorting by start makes the check independent of the order the ranges were written in; each range
  // is compared with the one reaching furthest among those starting before it.
  wellFormed.sort((a, b) => a.range.firstUnit - b.range.firstUnit || a.index - b.index);
  let reach: { range: PricedRange; index: number } | undefined;
  for (const current of wellFormed) {
    const { range, index } = current;
    if (reach !== undefined && range.firstUnit <= reach.range.lastUnit) {
      out.push({
        code: 'range_overlap',
        pointer: `/values/${index}`,
        message: `range ${range.firstUnit}..${range.lastUnit} overlaps the range at /values/${reach.index}`,
      });
    }
    if (reach === undefined || range.lastUnit > reach.range.lastUnit) reach = current;
  }
}

function checkValues(values: readonly { value: string; unitPrice: number }[], out: Violation[]): void {
  checkNotEmpty(values, 'empty_values', '/values', out);
  const firstSeen = new Map<string, number>();
  values.forEach(({ value, unitPrice }, i) => {
    checkDecimals(unitPrice, `/values/${i}/unitPrice`, out);
    const earlier = firstSeen.get(value);
    if (earlier === undefined) {
      firstSeen.set(value, i);
    } else {
      out.push({
        code: 'duplicate_value',
        pointer: `/values/${i}/value`,
        message: `value ${JSON.stringify(value)} already appears at /values/${earlier}`,
      });
    }
  });
}

/**
 * Rules of an adjustment that the JSON schema cannot express (docs/pricing.md). `too_many_decimals` and
 * `not_integer` concern a single field (a 400); the other codes relate several fields (a 422).
 */
export function validateAdjustment(adj: Adjustment): Violation[] {
  const out: Violation[] = [];
  switch (adj.type) {
    case 'override':
    case 'percent':
      checkDecimals(adj.amount, '/amount', out);
      return out;
    case 'volume':
      checkTiers(adj.tiers, out);
      return out;
    case 'range':
      checkRanges(adj.values, out);
      return out;
    case 'enum':
    case 'variant':
      checkValues(adj.values, out);
      return out;
  }
}

export type PriceEntry = {
  currency: string;
  standardPrice: string | null;
  listPrice: string | null;
  adjustment: Adjustment | null;
};

export type PriceLine = {
  quantity: number;
  properties: Readonly<Record<string, string | null>>;
  variantId?: string | null;
};

type BaseSource = 'listPrice' | 'standardPrice';

/** Why a line got its unit price; plain JSON, meant for a quote line's `trace`. */
export type PriceTrace = {
  adjustmentType: Adjustment['type'] | null;
  basis: BaseSource | 'override' | 'percent' | 'tier' | 'value' | 'range' | 'variant';
  /** The price the percent was taken from. */
  base?: { source: BaseSource; price: number };
  percent?: number;
  tier?: { firstUnit: number; lastUnit: number | null };
  /** The enum or range property looked up. */
  property?: string;
  /** The looked-up value: the property's value (enum, range) or the variant id. */
  value?: string;
  range?: { firstUnit: number; lastUnit: number };
};

export const priceErrorCodes = [
  'no_price',
  'no_matching_tier',
  'no_matching_value',
  'no_matching_range',
  'variant_required',
  'no_matching_variant',
] as const;
export type PriceErrorCode = (typeof priceErrorCodes)[number];

export type PriceResult =
  | { ok: true; unitPrice: Decimal; trace: PriceTrace }
  | { ok: false; code: PriceErrorCode; message: string };

function basePrice(entry: PriceEntry): { source: BaseSource; price: Decimal } | null {
  if (entry.listPrice !== null) return { source: 'listPrice', price: toDecimal(entry.listPrice) };
  if (entry.standardPrice !== null) return { source: 'standardPrice', price: toDecimal(entry.standardPrice) };
  return null;
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function fail(code: PriceErrorCode, message: string): PriceResult {
  return { ok: false, code, message };
}

// A unit price that depends on the entry alone is worked out once per entry: a quote prices the entries of a cached
// catalogue again on every request, and a percent is a decimal division. Results are shared, so never changed.
const pricedByEntry = new WeakMap<PriceEntry, PriceResult>();

/** The unit price of an entry with no adjustment, an override or a percent: the same for every line. */
function priceByEntry(
  entry: PriceEntry,
  adj: Extract<Adjustment, { type: 'override' | 'percent' }> | null,
): PriceResult {
  if (adj === null) {
    const base = basePrice(entry);
    if (base === null) return fail('no_price', `no listPrice or standardPrice in ${entry.currency}`);
    return { ok: true, unitPrice: base.price, trace: { adjustmentType: null, basis: base.source } };
  }
  if (adj.type === 'override') {
    return {
      ok: true,
      unitPrice: toDecimal(adj.amount),
      trace: { adjustmentType: 'override', basis: 'override' },
    };
  }
  const base = basePrice(entry);
  if (base === null) {
    return fail('no_price', `no listPrice or standardPrice in ${entry.currency} to take the percent from`);
  }
  // (100 - amount) / 100 is exact in decimal, unlike 1 - amount / 100 in binary floating point.
  const unitPrice = roundUnitPrice(base.price.times(toDecimal(100).minus(toDecimal(adj.amount))).div(100));
  return {
    ok: true,
    unitPrice,
    trace: {
      adjustmentType: 'percent',
      basis: 'percent',
      base: { source: base.source, price: toJsonNumber(base.price) },
      percent: adj.amount,
    },
  };
}

// A unit price set by one tier, enum value or variant of an adjustment is the same for every line it prices: it is
// made once per that object of the (cached) entry. Shared, so never changed.
const pricedByMatch = new WeakMap<object, PriceResult>();

function remember(match: object, priced: PriceResult): PriceResult {
  pricedByMatch.set(match, priced);
  return priced;
}

/** The unit price of one line from its price book entry in the line's currency (docs/pricing.md). */
export function priceUnit(entry: PriceEntry, line: PriceLine): PriceResult {
  const adj = entry.adjustment;
  if (adj === null || adj.type === 'override' || adj.type === 'percent') {
    let priced = pricedByEntry.get(entry);
    if (priced === undefined) {
      priced = priceByEntry(entry, adj);
      pricedByEntry.set(entry, priced);
    }
    return priced;
  }
  switch (adj.type) {
    case 'volume': {
      const q = line.quantity;
      const tier = adj.tiers.find((t) => t.firstUnit <= q && (t.lastUnit == null || q <= t.lastUnit));
      if (tier === undefined) return fail('no_matching_tier', `no volume tier holds quantity ${q}`);
      return (
        pricedByMatch.get(tier) ??
        remember(tier, {
          ok: true,
          unitPrice: toDecimal(tier.unitPrice),
          trace: {
            adjustmentType: 'volume',
            basis: 'tier',
            tier: { firstUnit: tier.firstUnit, lastUnit: tier.lastUnit ?? null },
          },
        })
      );
    }
    case 'enum': {
      const value = line.properties[adj.property] ?? null;
      const match = value === null ? undefined : adj.values.find((v) => v.value === value);
      if (match === undefined) {
        return fail(
          'no_matching_value',
          `no enum price for ${adj.property} = ${value === null ? 'no value' : JSON.stringify(value)}`,
        );
      }
      return (
        pricedByMatch.get(match) ??
        remember(match, {
          ok: true,
          unitPrice: toDecimal(match.unitPrice),
          trace: { adjustmentType: 'enum', basis: 'value', property: adj.property, value: match.value },
        })
      );
    }
    case 'range': {
      const raw = line.properties[adj.property] ?? null;
      const text = raw?.trim() ?? '';
      const numeric = NUMERIC.test(text) ? toDecimal(text) : null;
      const match =
        numeric === null
          ? undefined
          : adj.values.find((r) => numeric.gte(toDecimal(r.firstUnit)) && numeric.lte(toDecimal(r.lastUnit)));
      if (match === undefined) {
        return fail(
          'no_matching_range',
          `no range price for ${adj.property} = ${raw === null ? 'no value' : JSON.stringify(raw)}`,
        );
      }
      return {
        ok: true,
        unitPrice: toDecimal(match.unitPrice),
        trace: {
          adjustmentType: 'range',
          basis: 'range',
          property: adj.property,
          value: text,
          range: { firstUnit: match.firstUnit, lastUnit: match.lastUnit },
        },
      };
    }
    case 'variant': {
      const variantId = line.variantId ?? null;
      if (variantId === null)
        return fail('variant_required', 'the product is priced by variant: choose a variantId');
      const match = adj.values.find((v) => v.value === variantId);
      if (match === undefined) {
        return fail('no_matching_variant', `no price for variant ${JSON.stringify(variantId)}`);
      }
      return (
        pricedByMatch.get(match) ??
        remember(match, {
          ok: true,
          unitPrice: toDecimal(match.unitPrice),
          trace: { adjustmentType: 'variant', basis: 'variant', value: match.value },
        })
      );
    }
  }
}
