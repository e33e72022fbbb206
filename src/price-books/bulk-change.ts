import type { Adjustment } from '../pricing/adjustment.schema.ts';
import { minorUnits } from '../pricing/currencies.ts';
import { MAX_PRICE_DECIMALS, PRICE_LIMIT, toDecimal, toJsonNumber } from '../pricing/money.ts';
import type { BulkChangeField } from './price-books.schemas.ts';

/**
 * One amount changed by `percent`, rounded half up to the currency's minor unit, or to the amount's own decimal
 * places where it has more (a unit price of 0.0125 USD stays to four places): a pricing manager expects cents, and
 * never to lose the precision a price was given. Null when the result reaches the price limit.
 */
export function changedAmount(amount: number, percent: number, currency: string): number | null {
  const old = toDecimal(amount);
  const places = Math.min(MAX_PRICE_DECIMALS, Math.max(minorUnits(currency), old.decimalPlaces()));
  const changed = old.times(toDecimal(percent).plus(100)).dividedBy(100).toDecimalPlaces(places);
  return changed.greaterThanOrEqualTo(PRICE_LIMIT) ? null : toJsonNumber(changed);
}

/** The prices of one product in one currency that a bulk change reads and writes. */
export interface BulkPrices {
  standardPrice: number | null;
  listPrice: number | null;
  adjustment: Adjustment | null;
}

/** The adjustment with every money amount in it changed; a percent adjustment holds none. */
function changedAdjustment(adjustment: Adjustment, change: (amount: number) => number | null) {
  const priced = <T extends { unitPrice: number }>(values: T[]) =>
    values.map((value) => ({ ...value, unitPrice: change(value.unitPrice) }));
  switch (adjustment.type) {
    case 'override':
      return { ...adjustment, amount: change(adjustment.amount) };
    case 'percent':
      return adjustment;
    case 'volume':
      return { ...adjustment, tiers: priced(adjustment.tiers) };
    default:
      return { ...adjustment, values: priced(adjustment.values as { unitPrice: number }[]) };
  }
}

/**
 * The prices after the change of `fields` by `percent`, and whether any amount reached the price limit (then the
 * change cannot be made). Null prices stay null.
 */
export function changedPrices(
  prices: BulkPrices,
  { percent, fields, currency }: { percent: number; fields: readonly BulkChangeField[]; currency: string },
): { prices: BulkPrices; overflows: boolean } {
  let overflows = false;
  const change = (amount: number): number => {
    const changed = changedAmount(amount, percent, currency);
    if (changed === null) overflows = true;
    return changed ?? amount;
  };
  const next = { ...prices };
  if (fields.includes('standardPrice') && next.standardPrice !== null)
    next.standardPrice = change(next.standardPrice);
  if (fields.includes('listPrice') && next.listPrice !== null) next.listPrice = change(next.listPrice);
  if (fields.includes('adjustments') && next.adjustment !== null) {
    next.adjustment = changedAdjustment(next.adjustment, change) as Adjustment;
  }
  return { prices: next, overflows };
}
