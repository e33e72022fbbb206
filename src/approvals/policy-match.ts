import { type Decimal, toDecimal } from '../pricing/money.ts';
import type { PolicyConditions } from './approval-policies.schemas.ts';

/**
 * Which approval policies a priced quote needs, and why (contract C19). Pure, so the quotes service calls it as it
 * submits and tests read every boundary. Amounts come as JSON numbers or decimal text and are compared as decimals;
 * "above" is strictly greater.
 */

export interface LineForApproval {
  /** The rep's discount on the line, in percent; null or absent for none. */
  discountPercent?: number | string | null;
  /** Whether the rep set the line's unit price (C11 unitPrice). */
  unitPriceEdited: boolean;
}

export interface QuoteForApproval {
  currency: string;
  /** Before the reps' unit prices and discounts. */
  listTotal: number | string;
  /** After them. */
  total: number | string;
  lines: readonly LineForApproval[];
}

export interface PolicyForApproval {
  id: string;
  isActive: boolean;
  when: PolicyConditions;
}

export interface PolicyMatch {
  policyId: string;
  /** Every condition of the policy that holds, in a sentence a sales rep reads. */
  reason: string;
}

/** Lines a reason names one by one before it says how many more. */
const LINES_NAMED = 5;

const hundred = toDecimal(100);

/** A percent as a person reads it: exact to 4 decimal places, else rounded to them and said to be about that. */
function percentText(value: Decimal): string {
  const rounded = value.toDecimalPlaces(4);
  return `${rounded.eq(value) ? '' : 'about '}${rounded.toString()}%`;
}

function namedLines(items: readonly string[]): string {
  const named = items.slice(0, LINES_NAMED).join(', ');
  const more = items.length - LINES_NAMED;
  return more > 0 ? `${named} and ${more} more` : named;
}

function lineDiscountReason(quote: QuoteForApproval, threshold: number): string | null {
  const limit = toDecimal(threshold);
  const above: string[] = [];
  quote.lines.forEach((line, i) => {
    if (line.discountPercent == null) return;
    const discount = toDecimal(line.discountPercent);
    if (discount.gt(limit)) above.push(`line ${i + 1} at ${percentText(discount)}`);
  });
  return above.length === 0 ? null : `line discount above ${percentText(limit)}: ${namedLines(above)}`;
}

function quoteDiscountReason(quote: QuoteForApproval, threshold: number): string | null {
  const list = toDecimal(quote.listTotal);
  // A quote that lists at nothing has no discount to speak of.
  if (list.lte(0)) return null;
  const off = list.minus(toDecimal(quote.total));
  const limit = toDecimal(threshold);
  // off / list x 100 > limit, multiplied out so that no division rounds at the boundary.
  if (!off.times(hundred).gt(limit.times(list))) return null;
  return `quote discount ${percentText(off.div(list).times(hundred))} is above ${percentText(limit)}`;
}

function totalReason(quote: QuoteForApproval, above: { currency: string; amount: number }): string | null {
  if (quote.currency !== above.currency) return null;
  const total = toDecimal(quote.total);
  const limit = toDecimal(above.amount);
  if (!total.gt(limit)) return null;
  return `total ${total.toString()} ${quote.currency} is above ${limit.toString()} ${above.currency}`;
}

function unitPriceReason(quote: QuoteForApproval): string | null {
  const edited = quote.lines.flatMap((line, i) => (line.unitPriceEdited ? [`line ${i + 1}`] : []));
  return edited.length === 0 ? null : `unit price set by the rep on ${namedLines(edited)}`;
}

/** The conditions of `when` that hold for the quote, each as a reason; none when the policy does not match. */
export function reasonsOf(quote: QuoteForApproval, when: PolicyConditions): string[] {
  const reasons = [
    when.lineDiscountPercentAbove === undefined
      ? null
      : lineDiscountReason(quote, when.lineDiscountPercentAbove),
    when.quoteDiscountPercentAbove === undefined
      ? null
      : quoteDiscountReason(quote, when.quoteDiscountPercentAbove),
    when.totalAbove === undefined ? null : totalReason(quote, when.totalAbove),
    when.unitPriceEdited === true ? unitPriceReason(quote) : null,
  ];
  return reasons.filter((reason) => reason !== null);
}

/** Every active policy that matches the quote, in the order given, with why. Inactive policies never match. */
export function matchPolicies(
  quote: QuoteForApproval,
  policies: readonly PolicyForApproval[],
): PolicyMatch[] {
  return policies.flatMap((policy) => {
    if (!policy.isActive) return [];
    const reasons = reasonsOf(quote, policy.when);
    return reasons.length === 0 ? [] : [{ policyId: policy.id, reason: reasons.join('; ') }];
  });
}

/** Whether `when` names any condition that can hold. */
export function hasCondition(when: PolicyConditions): boolean {
  return (
    when.lineDiscountPercentAbove !== undefined ||
    when.quoteDiscountPercentAbove !== undefined ||
    when.totalAbove !== undefined ||
    when.unitPriceEdited === true
  );
}
