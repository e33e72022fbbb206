import { Decimal as DecimalJs } from 'decimal.js';
import { minorUnits } from './currencies.ts';

// A private constructor keeps the global decimal.js configuration untouched for other code. The
// exponent limits make toString() always plain notation, so stored strings never read "1e-7".
const PRECISION = 40;
const Dec = DecimalJs.clone({
  precision: PRECISION,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

export type Decimal = DecimalJs;

export const MAX_PRICE_DECIMALS = 6;

/**
 * Prices stay below 10^15 (21 significant digits with 6 decimals), percent markups at most 1000 %, and
 * quote quantities at most 10^15, so every product fits the 40-digit precision and stays exact, and
 * every total is a finite JSON number.
 */
export const PRICE_LIMIT = 1e15;
export const MAX_MARKUP_PERCENT = 1000;

// Numbers go through String(), the shortest string that round-trips, so 0.1 is exactly 0.1. Decimals never change, so
// the most recent texts and numbers are kept parsed: a quote reads the same cached prices on every request, and a
// number looked up as itself spares the String() of every lookup.
const parsed = new Map<string | number, Decimal>();
const PARSED_KEPT = 10_000;
// The JSON number of each decimal kept parsed, worked out once: a quote shows the same catalogue prices on every
// request.
const jsonNumbers = new WeakMap<Decimal, number>();

export function toDecimal(value: number | string | Decimal): Decimal {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new RangeError(`Not a finite number: ${value}`);
  }
  if (value instanceof Dec) {
    if (!value.isFinite()) throw new RangeError(`Not a finite decimal: ${value.toString()}`);
    return value;
  }
  let d = parsed.get(value);
  if (d !== undefined) return d;
  const text = typeof value === 'number' ? String(value) : value;
  d = parsed.get(text);
  if (d === undefined) {
    d = new Dec(text);
    if (!d.isFinite()) throw new RangeError(`Not a finite decimal: ${text}`);
    if (parsed.size >= PARSED_KEPT) parsed.clear();
    parsed.set(text, d);
    jsonNumbers.set(d, Number(d.toString()));
  }
  // A number and its text stand for one decimal.
  parsed.set(value, d);
  return d;
}

export function decimalPlaces(value: number): number {
  // Read off the shortest round-trip string, as toDecimal reads it; only exponent notation needs decimal.js.
  const text = String(value);
  if (!Number.isFinite(value) || text.includes('e')) return toDecimal(value).decimalPlaces();
  const point = text.indexOf('.');
  return point === -1 ? 0 : text.length - point - 1;
}

export function roundUnitPrice(d: Decimal): Decimal {
  return toDecimal(d).toDecimalPlaces(MAX_PRICE_DECIMALS, Dec.ROUND_HALF_UP);
}

export function lineTotal(unitPrice: Decimal, quantity: number, currency: string): Decimal {
  const unit = toDecimal(unitPrice);
  const units = toDecimal(quantity);
  // A product has at most the significant digits of both factors; beyond the working precision
  // decimal.js would round it silently, and an inexact total is worse than none.
  if (unit.sd() + units.sd() > PRECISION) {
    throw new RangeError(`${unit.toString()} x ${units.toString()} needs more than ${PRECISION} digits`);
  }
  const places = minorUnits(currency);
  const total = unit.times(units);
  // Most totals already fit the currency: rounding would only copy them.
  return total.decimalPlaces() <= places ? total : total.toDecimalPlaces(places, Dec.ROUND_HALF_UP);
}

// Wide enough for a price (21 digits) x a quantity (16) x a percentage (5): the discounted total is exact before
// it is rounded.
const Wide = Dec.clone({ precision: 2 * PRECISION });

/**
 * unitPrice x quantity less `percentOff` percent, rounded half up to the currency's minor units, and never below 0:
 * the total of a saved quote's line.
 */
export function discountedLineTotal(
  unitPrice: Decimal,
  quantity: number,
  percentOff: Decimal,
  currency: string,
): Decimal {
  const net = new Wide(toDecimal(unitPrice)).times(quantity).times(new Wide(100).minus(percentOff)).div(100);
  const rounded = new Dec(net.toDecimalPlaces(minorUnits(currency), Dec.ROUND_HALF_UP).toString());
  return rounded.gt(0) ? rounded : new Dec(0);
}

// A total is the sum of lines already rounded to the currency's minor units; an unrounded line here is a
// caller bug that would make the total disagree with the lines shown, so it throws.
export function sumTotals(lines: readonly Decimal[], currency: string): Decimal {
  const places = minorUnits(currency);
  return lines.reduce<Decimal>((acc, line) => {
    if (line.decimalPlaces() > places) {
      throw new RangeError(`Line total ${line.toString()} has more than ${places} decimals for ${currency}`);
    }
    return acc.plus(line);
  }, new Dec(0));
}

export function toJsonNumber(d: Decimal): number {
  return jsonNumbers.get(d) ?? Number(d.toString());
}

/** A decimal as a whole number of 10^-scale. */
interface Scaled {
  units: number;
  scale: number;
}

// Worked out once per decimal: a quote multiplies the same catalogue prices on every request.
const scaledByDecimal = new WeakMap<Decimal, Scaled | null>();

/** `d` scaled to a whole number, or null when that number is not a safe integer (a non-finite `d` included). */
function scaledOf(d: Decimal): Scaled | null {
  let scaled = scaledByDecimal.get(d);
  if (scaled === undefined) {
    // toString() is plain notation (see Dec), so its digits without the point are the units.
    const text = d.toString();
    const point = text.indexOf('.');
    const units = Number(point === -1 ? text : text.slice(0, point) + text.slice(point + 1));
    scaled = Number.isSafeInteger(units)
      ? { units, scale: point === -1 ? 0 : text.length - point - 1 }
      : null;
    scaledByDecimal.set(d, scaled);
  }
  return scaled;
}

// 10^0 to 10^22, each exact in a double (5^22 < 2^53), read from their literals rather than computed.
const exactPowersOfTen = Array.from({ length: 23 }, (_, n) => Number(`1e${n}`));

/**
 * `scaled` x `quantity` rounded half up (away from zero on a tie, as decimal.js's ROUND_HALF_UP) to whole
 * 10^-places, when every step is a safe integer: then each is exact in a double. Null otherwise.
 */
function minorUnitsOf(scaled: Scaled, quantity: number, places: number): number | null {
  const product = scaled.units * quantity;
  // A product beyond 2^53 cannot round to a safe integer, so a safe result is the exact product.
  if (!Number.isSafeInteger(product)) return null;
  if (scaled.scale <= places) {
    const minor = product * (exactPowersOfTen[places - scaled.scale] as number);
    return Number.isSafeInteger(minor) ? minor : null;
  }
  const divisor = exactPowersOfTen[scaled.scale - places];
  if (divisor === undefined) return null;
  // % of two integers is exact in doubles, and takes the sign of the product.
  const remainder = product % divisor;
  const truncated = (product - remainder) / divisor;
  return 2 * Math.abs(remainder) >= divisor ? truncated + Math.sign(product) : truncated;
}

/**
 * The line totals of a quote in one currency and their sum, as `lineTotal` and `sumTotals` work them out. While
 * the amounts are safe integers of the currency's minor units they are added as such in doubles, exactly, at a
 * fraction of decimal.js's cost; a line beyond that is worked out in decimals, and so is then the sum.
 */
export class QuoteTotals {
  readonly #currency: string;
  readonly #places: number;
  /** 10^places: a whole number of minor units over it is the correctly rounded double of the decimal. */
  readonly #perUnit: number;
  #minor = 0;
  readonly #decimals: Decimal[] = [];

  constructor(currency: string) {
    this.#currency = currency;
    this.#places = minorUnits(currency);
    this.#perUnit = exactPowersOfTen[this.#places] as number;
  }

  /** Adds unitPrice x quantity rounded half up to the currency's minor units; answers it as a JSON number. */
  add(unitPrice: Decimal, quantity: number): number {
    // A price scaledOf cannot take (not finite, say) goes to lineTotal, which refuses it as it always has.
    const scaled = Number.isSafeInteger(quantity) ? scaledOf(unitPrice) : null;
    const minor = scaled === null ? null : minorUnitsOf(scaled, quantity, this.#places);
    if (minor !== null && Number.isSafeInteger(this.#minor + minor)) {
      this.#minor += minor;
      // + 0 makes a negative zero (a negative price x 0) the 0 that decimals give.
      return minor / this.#perUnit + 0;
    }
    const total = lineTotal(unitPrice, quantity, this.#currency);
    this.#decimals.push(total);
    return toJsonNumber(total);
  }

  /** The sum of the lines added, as a JSON number. */
  total(): number {
    if (this.#decimals.length === 0) return this.#minor / this.#perUnit + 0;
    const minor = new Dec(this.#minor).div(this.#perUnit);
    return toJsonNumber(sumTotals([minor, ...this.#decimals], this.#currency));
  }
}
