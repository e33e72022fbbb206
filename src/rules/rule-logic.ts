import type { Selector, When } from './rules.schemas.ts';

/** Every selector of a condition, with its JSON Pointer below `at`, in document order. */
export function selectorsOf(when: When, at: string): { selector: Selector; at: string }[] {
  if ('all' in when) return when.all.flatMap((w, i) => selectorsOf(w, `${at}/all/${i}`));
  if ('any' in when) return when.any.flatMap((w, i) => selectorsOf(w, `${at}/any/${i}`));
  if ('not' in when) return selectorsOf(when.not, `${at}/not`);
  return [{ selector: when, at }];
}

/**
 * The condition with each selector replaced by what `f` makes of it: another selector, or null for none. An
 * all/any keeps the operands left, and a not or an all/any left with nothing is gone too. Null when nothing is
 * left. Rule cleanup (selectors dropped) and clone (options renamed) both come through here.
 */
export function mapSelectors(when: When, f: (s: Selector) => Selector | null): When | null {
  if ('all' in when || 'any' in when) {
    const [key, operands] = 'all' in when ? (['all', when.all] as const) : (['any', when.any] as const);
    const kept = operands.flatMap((w) => mapSelectors(w, f) ?? []);
    if (kept.length === 0) return null;
    return key === 'all' ? { all: kept } : { any: kept };
  }
  if ('not' in when) {
    const inner = mapSelectors(when.not, f);
    return inner === null ? null : { not: inner };
  }
  return f(when);
}

/** Whether a selector holds, given whether a product (by option and CRM product id) or an option is chosen. */
export interface Chosen {
  product(optionId: string, productId: string): boolean;
  option(optionId: string): boolean;
}

export function selectorHolds(selector: Selector, chosen: Chosen): boolean {
  return selector.productId === undefined
    ? chosen.option(selector.optionId)
    : chosen.product(selector.optionId, selector.productId);
}

export function whenHolds(when: When, chosen: Chosen): boolean {
  if ('all' in when) return when.all.every((w) => whenHolds(w, chosen));
  if ('any' in when) return when.any.some((w) => whenHolds(w, chosen));
  if ('not' in when) return !whenHolds(when.not, chosen);
  return selectorHolds(when, chosen);
}

export interface RuleLogic {
  kind: 'requires' | 'excludes';
  when: When;
  then: Selector[];
}

/** Whether a rule holds for a configuration: when `when` holds, every (requires) or no (excludes) selector does. */
export function ruleHolds(rule: RuleLogic, chosen: Chosen): boolean {
  if (!whenHolds(rule.when, chosen)) return true;
  return rule.kind === 'requires'
    ? rule.then.every((s) => selectorHolds(s, chosen))
    : !rule.then.some((s) => selectorHolds(s, chosen));
}

/** A rule as quotes and the configurator read it. */
export interface ModelRule extends RuleLogic {
  id: string;
  name: string;
  message: string | null;
}

/** What a sales rep reads about a rule: its message, else its name. */
export function ruleMessage(rule: ModelRule): string {
  return rule.message ?? rule.name;
}
