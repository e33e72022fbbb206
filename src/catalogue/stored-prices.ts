// How prices and adjustments are stored, one way and back: every reader of stored prices (price books, bundle
// details, quotes) converts through these.
import type { Adjustment } from '../pricing/adjustment.schema.ts';
import { toDecimal } from '../pricing/money.ts';

/**
 * Stored money is plain decimal text written by toStoredPrice, at most 6 places; Number() reads it to the same
 * double toJsonNumber would, without a decimal.js round trip on every price of a bundle-details response.
 */
export function toPrice(text: string | null): number | null {
  return text === null ? null : Number(text);
}

export function toStoredPrice(value: number | null): string | null {
  if (value === null) return null;
  // The shortest round-trip string is already the stored form unless it is in exponent notation.
  const text = String(value);
  return Number.isFinite(value) && !text.includes('e') ? text : toDecimal(value).toString();
}

/** The flag lives on the entry, not in the stored document; every adjustment read carries it. */
export function toAdjustment(text: string | null, allowUnitPriceEditing: boolean): Adjustment | null {
  if (text === null) return null;
  const adjustment = JSON.parse(text) as Adjustment;
  adjustment.allowUnitPriceEditing = allowUnitPriceEditing;
  return adjustment;
}

export function toStoredAdjustment(adjustment: Adjustment | null): string | null {
  if (adjustment === null) return null;
  const { allowUnitPriceEditing: _onTheEntry, ...stored } = adjustment;
  return JSON.stringify(stored);
}
