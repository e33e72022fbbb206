// How the console writes money, adjustments and rules for people.
import type { Schemas } from '@cpq/client';

type Adjustment = Schemas['PriceAdjustment'];

// Making an Intl.NumberFormat is slow, and a price grid formats thousands of amounts in a few currencies.
const formats = new Map<string, Intl.NumberFormat>();
const minor = new Map<string, number>();

/** The digits after the point a currency uses (ISO 4217 minor units: JPY 0, USD 2, KWD 3). */
export function minorUnits(currency: string): number {
  let digits = minor.get(currency);
  if (digits === undefined) {
    try {
      digits =
        new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
          .maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    minor.set(currency, digits);
  }
  return digits;
}

/**
 * An amount in its currency: at least the currency's minor units, and more when the amount has them (a unit price
 * may carry up to 6 decimal places, and is shown exactly).
 */
export function money(amount: number, currency: string): string {
  const decimals = (String(amount).split('.')[1] ?? '').length;
  const digits = Math.min(6, Math.max(minorUnits(currency), decimals));
  const key = `${currency}:${digits}`;
  let format = formats.get(key);
  if (format === undefined) {
    try {
      format = new Intl.NumberFormat('en', {
        style: 'currency',
        currency,
        currencyDisplay: 'narrowSymbol',
        minimumFractionDigits: minorUnits(currency),
        maximumFractionDigits: digits,
      });
    } catch {
      format = new Intl.NumberFormat('en', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
    }
    formats.set(key, format);
  }
  return format.format(amount);
}

/**
 * Said beside an amount money() shows with more decimals than its currency uses, so a person does not take €305.026
 * for a typo: "a unit price to 3 decimals; EUR uses 2". Null for an amount the currency's own digits hold.
 */
export function finerThanCurrency(amount: number, currency: string): string | null {
  const decimals = Math.min(6, (String(amount).split('.')[1] ?? '').length);
  const digits = minorUnits(currency);
  return decimals > digits ? `a unit price to ${decimals} decimals; ${currency} uses ${digits}` : null;
}

function units(first: number, last: number | null | undefined): string {
  if (last === null || last === undefined) return `${first} and more`;
  if (first === last) return `${first} ${first === 1 ? 'unit' : 'units'}`;
  return `${first}–${last} units`;
}

/** An adjustment in words: "10% off the list price", "1–9 units at $10.00, 10 and more at $8.00". */
export function describeAdjustment(
  adjustment: Adjustment,
  currency: string,
  base: 'list' | 'standard',
): string {
  const price = (amount: number) => money(amount, currency);
  switch (adjustment.type) {
    case 'override':
      return `fixed at ${price(adjustment.amount)}`;
    case 'percent':
      return adjustment.amount >= 0
        ? `${adjustment.amount}% off the ${base} price`
        : `${-adjustment.amount}% above the ${base} price`;
    case 'volume':
      return adjustment.tiers
        .map((tier) => `${units(tier.firstUnit, tier.lastUnit)} at ${price(tier.unitPrice)}`)
        .join(', ');
    case 'enum':
      return `by ${adjustment.property}: ${adjustment.values.map((v) => `${v.value} at ${price(v.unitPrice)}`).join(', ')}`;
    case 'range':
      return `by ${adjustment.property}: ${adjustment.values
        .map(
          (v) =>
            `${v.firstUnit === v.lastUnit ? v.firstUnit : `${v.firstUnit}–${v.lastUnit}`} at ${price(v.unitPrice)}`,
        )
        .join(', ')}`;
    case 'variant':
      return `by variant: ${adjustment.values.map((v) => `${v.value} at ${price(v.unitPrice)}`).join(', ')}`;
  }
}

export interface Names {
  option(optionId: string): string;
  /** A product's name within its option (productName), where the caller knows it. */
  product?(optionId: string, productId: string): string;
}

type Selector = Schemas['RuleSelector'];
type Condition = Schemas['RuleCondition'] | Schemas['RuleCondition3'] | Schemas['RuleCondition2'];

export function describeSelector(selector: Selector, names: Names): string {
  const option = names.option(selector.optionId);
  if (selector.productId === undefined) return `any product of ${option}`;
  return `${names.product?.(selector.optionId, selector.productId) ?? selector.productId} in ${option}`;
}

export function describeCondition(condition: Condition, names: Names): string {
  if ('all' in condition) return condition.all.map((c) => wrap(c, names)).join(' and ');
  if ('any' in condition) return condition.any.map((c) => wrap(c, names)).join(' or ');
  if ('not' in condition) return `not ${wrap(condition.not, names)}`;
  return describeSelector(condition, names);
}

function wrap(condition: Condition, names: Names): string {
  const text = describeCondition(condition, names);
  return 'optionId' in condition || 'not' in condition ? text : `(${text})`;
}

/** A rule in words: "When X in Processor, require Y in Memory". */
export function describeRule(rule: Pick<Schemas['Rule'], 'kind' | 'when' | 'then'>, names: Names): string {
  const then = rule.then.map((s) => describeSelector(s, names));
  return rule.kind === 'requires'
    ? `When ${describeCondition(rule.when, names)}, require ${then.join(' and ')}`
    : `When ${describeCondition(rule.when, names)}, exclude ${then.join(' and ')}`;
}

export function dateTime(value: string): string {
  return new Date(value).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** An adjustment in words, for the price grid. */
export function adjustmentText(
  adjustment: Adjustment | null | undefined,
  currency: string,
  listPrice: number | null | undefined,
): string | null {
  if (!adjustment) return null;
  const words = describeAdjustment(
    adjustment,
    currency,
    listPrice === null || listPrice === undefined ? 'standard' : 'list',
  );
  return adjustment.allowUnitPriceEditing ? `${words}; reps may edit the unit price` : words;
}

/** What people call a product: its `name` property where it has one, else its CRM product id. */
export function productName(product: {
  productId: string;
  properties: Record<string, string | null>;
}): string {
  return product.properties.name ?? product.productId;
}

/**
 * Who a key is to people: its name, else the end of its id (enough to tell keys apart, short enough for a phone).
 */
export function keyWords(keyName: string | null, keyId: string): string {
  return keyName ?? `an unnamed key …${keyId.slice(-6)}`;
}
