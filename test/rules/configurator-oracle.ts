import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pigeonholeOptions, pigeonholeRules } from '../../bench/rules.ts';
import { compileModel, configure, type ModelOption } from '../../src/rules/configurator.ts';
import { type ModelRule, ruleHolds } from '../../src/rules/rule-logic.ts';
import type { Selector, When } from '../../src/rules/rules.schemas.ts';

// The configurator against brute force: small random bundles (up to 5 options x 4 products, random types, counts,
// defaults, up to 8 random rules with nested `when`), random selections and rejections, and every configuration
// enumerated. npm test runs committed seeds (configurator.property.test.ts); npm run fuzz draws new ones.

export interface Case {
  options: ModelOption[];
  rules: ModelRule[];
  selected: [number, number][];
  rejected: [number, number][];
}

const selector = (options: ModelOption[]): fc.Arbitrary<Selector> =>
  fc.integer({ min: 0, max: options.length - 1 }).chain((o) => {
    const option = options[o] as ModelOption;
    return fc
      .option(fc.constantFrom(...option.products), { nil: undefined })
      .map((productId) =>
        productId === undefined ? { optionId: option.id } : { optionId: option.id, productId },
      );
  });

const when = (options: ModelOption[], depth: number): fc.Arbitrary<When> =>
  depth === 1
    ? selector(options)
    : fc.oneof(
        { weight: 3, arbitrary: selector(options) },
        {
          weight: 1,
          arbitrary: fc
            .array(when(options, depth - 1), { minLength: 1, maxLength: 3 })
            .map((all) => ({ all })),
        },
        {
          weight: 1,
          arbitrary: fc
            .array(when(options, depth - 1), { minLength: 1, maxLength: 3 })
            .map((any) => ({ any })),
        },
        { weight: 1, arbitrary: when(options, depth - 1).map((inner) => ({ not: inner })) },
      );

const count = fc.option(fc.integer({ min: 0, max: 4 }), { nil: null, freq: 2 });

const option = (o: number): fc.Arbitrary<ModelOption> =>
  fc
    .record({
      type: fc.constantFrom('INCLUDED' as const, 'ADD_ON' as const),
      size: fc.integer({ min: 1, max: 4 }),
      min: count,
      max: count,
      defaultIndex: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    })
    .map(({ type, size, min, max, defaultIndex }) => {
      const products = Array.from({ length: size }, (_, p) => `P${o}${p}`);
      const [minCount, maxCount] = min !== null && max !== null && min > max ? [max, min] : [min, max];
      const defaultProductId = defaultIndex === null ? null : (products[defaultIndex] ?? null);
      return { id: `opt${o}`, type, minCount, maxCount, defaultProductId, products };
    });

/** A random rule over the options: either kind, a `when` up to the deepest allowed, one to three selectors in `then`. */
export const ruleOf = (options: ModelOption[]) =>
  fc.record({
    kind: fc.constantFrom('requires' as const, 'excludes' as const),
    when: when(options, 4),
    then: fc.array(selector(options), { minLength: 1, maxLength: 3 }),
  });

export const bundleCase: fc.Arbitrary<Case> = fc
  .integer({ min: 1, max: 5 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, o) => option(o))))
  .chain((options) => {
    const pairs = options.flatMap((opt, o) => opt.products.map((_, p) => [o, p] as [number, number]));
    const rule = ruleOf(options);
    return fc.record({
      options: fc.constant(options),
      rules: fc.array(rule, { maxLength: 8 }).map((rules) =>
        rules.map(
          (r, i): ModelRule => ({
            ...r,
            id: `rul${i}`,
            name: `rule ${i}`,
            message: i % 2 ? null : `m${i}`,
          }),
        ),
      ),
      selected: fc.subarray(pairs, { maxLength: Math.min(3, pairs.length) }),
      rejected: fc.subarray(pairs, { maxLength: Math.min(3, pairs.length) }),
    });
  });

/** The counts C14 allows, stated afresh from the contract: INCLUDED at least one; ADD_ON none, or within its counts. */
function countAllowed(option: ModelOption, c: number): boolean {
  const withinCounts = c >= (option.minCount ?? 0) && (option.maxCount === null || c <= option.maxCount);
  return option.type === 'INCLUDED' ? c >= 1 && withinCounts : c === 0 || (c >= 1 && withinCounts);
}

/** Every set of products of the bundle, as one bitmask per option. */
function* everyConfiguration(options: ModelOption[]): Generator<number[]> {
  const masks = options.map(() => 0);
  for (;;) {
    yield masks;
    let o = 0;
    while (o < options.length) {
      const size = (options[o] as ModelOption).products.length;
      masks[o] = ((masks[o] as number) + 1) % (1 << size);
      if (masks[o] !== 0) break;
      o++;
    }
    if (o === options.length) return;
  }
}

const bits = (mask: number) => {
  let n = 0;
  for (let m = mask; m; m >>= 1) n += m & 1;
  return n;
};

/** What a configuration breaks: bit o for option o's count, bit options.length + r for rule r. */
function brokenBy(options: ModelOption[], rules: ModelRule[], masks: number[]): number {
  let broken = 0;
  options.forEach((option, o) => {
    if (!countAllowed(option, bits(masks[o] as number))) broken |= 1 << o;
  });
  const index = new Map(options.map((option, o) => [option.id, o]));
  const chosen = {
    option: (optionId: string) => (masks[index.get(optionId) as number] as number) !== 0,
    product: (optionId: string, productId: string) => {
      const o = index.get(optionId) as number;
      const p = (options[o] as ModelOption).products.indexOf(productId);
      return p >= 0 && ((masks[o] as number) & (1 << p)) !== 0;
    },
  };
  rules.forEach((rule, r) => {
    if (!ruleHolds(rule, chosen)) broken |= 1 << (options.length + r);
  });
  return broken;
}

/** The pigeonhole as the oracle and the configurator read it: options opt0.., products P<o><p>. */
export function pigeonholeCase(pigeons: number, holes: number): Omit<Case, 'selected' | 'rejected'> {
  const ids = Array.from({ length: pigeons }, (_, o) => `opt${o}`);
  const rename = (productId: string, optionId: string) =>
    `P${optionId.slice(3)}${Number(productId.slice('HOLE-'.length)) - 1}`;
  // The oracle names products per option; here each option's products are its own ids for the same holes.
  const options: ModelOption[] = pigeonholeOptions(pigeons, holes).map((option, o) => ({
    id: ids[o] as string,
    name: option.name,
    type: option.type,
    minCount: option.configuration.minCount,
    maxCount: option.configuration.maxCount,
    defaultProductId: null,
    products: option.products.map((p) => rename(p.productId, ids[o] as string)),
  }));
  const renamed = (s: Selector) => ({
    optionId: s.optionId,
    productId: rename(s.productId as string, s.optionId),
  });
  const rules: ModelRule[] = pigeonholeRules(ids, holes).map((rule, r) => ({
    ...rule,
    id: `rul${r}`,
    when: renamed(rule.when as Selector),
    then: rule.then.map(renamed),
  }));
  return { options, rules };
}

export const validByBruteForce = (options: ModelOption[], rules: ModelRule[], masks: number[]) =>
  brokenBy(options, rules, masks) === 0;

// Reasons are checked where every configuration extending the request can be kept: up to this many.
const REASONS_CHECKED_UP_TO = 1 << 14;

export function check({ options, rules, selected, rejected }: Case): void {
  const model = compileModel(options, rules);
  const variable = ([o, p]: [number, number]) => model.varOf.get(`opt${o}\nP${o}${p}`) as number;
  const answer = configure(model, { chosen: selected.map(variable), rejected: rejected.map(variable) });

  const mask = (pairs: [number, number][]) => {
    const masks = options.map(() => 0);
    for (const [o, p] of pairs) masks[o] = (masks[o] as number) | (1 << p);
    return masks;
  };
  const selectedMasks = mask(selected);
  const rejectedMasks = mask(rejected);
  const cost = (masks: number[]) =>
    options.reduce((sum, option, o) => {
      const added = (masks[o] as number) & ~(selectedMasks[o] as number);
      return (
        sum +
        option.products.reduce(
          (s, productId, p) => s + (added & (1 << p) ? (productId === option.defaultProductId ? 1 : 2) : 0),
          0,
        )
      );
    }, 0);
  const extensions: number[][] = [];
  // Every configuration extending the request, with what it breaks (while there are few enough to keep).
  const extending: { masks: number[]; broken: number }[] = [];
  const keep = options.reduce((n, option) => n * 2 ** option.products.length, 1) <= REASONS_CHECKED_UP_TO;
  for (const masks of everyConfiguration(options)) {
    const extends_ = masks.every(
      (m, o) =>
        (m & (selectedMasks[o] as number)) === selectedMasks[o] && (m & (rejectedMasks[o] as number)) === 0,
    );
    if (!extends_) continue;
    const broken = brokenBy(options, rules, masks);
    if (broken === 0) extensions.push([...masks]);
    if (keep) extending.push({ masks: [...masks], broken });
  }
  // The constraints a list of reasons names, as the bits brokenBy sets.
  const named = (reasons: readonly { ruleId: string; optionId: string | null }[]) =>
    reasons.reduce(
      (bitsSoFar, reason) =>
        bitsSoFar |
        (reason.ruleId === 'option'
          ? 1 << options.findIndex((option) => option.id === reason.optionId)
          : 1 << (options.length + rules.findIndex((rule) => rule.id === reason.ruleId))),
      0,
    );
  // Configurations extending the request that break none of the constraints named.
  const unbroken = (reasons: readonly { ruleId: string; optionId: string | null }[]) => {
    const constraints = named(reasons);
    return extending.filter((e) => (e.broken & constraints) === 0);
  };

  const where = JSON.stringify({ options, rules, selected, rejected });
  assert.equal(answer.valid, extensions.length > 0, `valid: ${where}`);
  assert.equal(answer.complete, validByBruteForce(options, rules, selectedMasks), `complete: ${where}`);
  options.forEach((option, o) => {
    option.products.forEach((productId, p) => {
      const v = model.varOf.get(`${option.id}\n${productId}`) as number;
      const isSelected = ((selectedMasks[o] as number) & (1 << p)) !== 0;
      const holding = extensions.filter((m) => ((m[o] as number) & (1 << p)) !== 0).length;
      const expected = isSelected
        ? 'selected'
        : holding === 0
          ? 'excluded'
          : holding === extensions.length
            ? 'required'
            : 'available';
      assert.equal(answer.states[v], expected, `${productId} of ${option.id}: ${where}`);
      const isRejected = ((rejectedMasks[o] as number) & (1 << p)) !== 0;
      if (answer.valid && (expected === 'excluded' || expected === 'required') && !isRejected) {
        assert.ok((answer.reasons[v] ?? []).length > 0, `reasons of ${productId}: ${where}`);
      }
      // The reasons alone prove the state: with the request, the constraints they name leave no configuration
      // that holds the product (excluded), or none that leaves it out (required).
      if (keep && answer.valid && (expected === 'excluded' || expected === 'required')) {
        const holds = (e: { masks: number[] }) => ((e.masks[o] as number) & (1 << p)) !== 0;
        assert.ok(
          unbroken(answer.reasons[v] ?? []).every((e) => holds(e) === (expected === 'required')),
          `reasons of ${productId} prove it ${expected}: ${where}`,
        );
      }
    });
  });
  if (extensions.length === 0) {
    assert.equal(answer.completion, null, where);
    // The violations alone rule out every configuration extending the request.
    if (keep) assert.equal(unbroken(answer.violations).length, 0, `violations prove it: ${where}`);
    return;
  }
  assert.ok(answer.completion, where);
  const completionMasks = options.map((option) =>
    option.products.reduce((m, productId, p) => {
      const v = model.varOf.get(`${option.id}\n${productId}`) as number;
      return answer.completion?.[v] === 1 ? m | (1 << p) : m;
    }, 0),
  );
  assert.ok(
    extensions.some((m) => m.every((x, o) => x === completionMasks[o])),
    `completion is a valid extension: ${where}`,
  );
  // Folded rather than spread into Math.min: five options of four products have up to a million extensions.
  assert.equal(
    cost(completionMasks),
    extensions.reduce((least, m) => Math.min(least, cost(m)), Number.POSITIVE_INFINITY),
    `completion is cheapest: ${where}`,
  );
}

/**
 * The repairs of a request no valid configuration extends, against brute force over every subset of its choices:
 * each repair works (the rest is extended by a valid configuration), none holds a smaller one that works, and
 * they are the smallest minimal ones, smallest first, as many as there are up to three.
 */
export function checkRepairs({ options, rules, selected, rejected }: Case): void {
  const model = compileModel(options, rules);
  const variable = ([o, p]: [number, number]) => model.varOf.get(`opt${o}\nP${o}${p}`) as number;
  const answer = configure(model, { chosen: selected.map(variable), rejected: rejected.map(variable) });
  const where = JSON.stringify({ options, rules, selected, rejected });
  if (answer.valid) {
    assert.deepEqual(answer.repairs, [], where);
    return;
  }
  const valid: number[][] = [];
  for (const masks of everyConfiguration(options)) {
    if (brokenBy(options, rules, masks) === 0) valid.push([...masks]);
  }
  // The choices as bits of a subset: selections first, then rejections.
  const choices = [...selected.map((c) => ({ c, held: true })), ...rejected.map((c) => ({ c, held: false }))];
  const works = (dropped: number) =>
    valid.some((masks) =>
      choices.every(({ c: [o, p], held }, i) => {
        if (dropped & (1 << i)) return true;
        return (((masks[o] as number) >> p) & 1) === (held ? 1 : 0);
      }),
    );
  const minimal: number[] = [];
  for (let set = 0; set < 1 << choices.length; set++) {
    if (!works(set)) continue;
    let proper = false;
    for (let sub = (set - 1) & set; sub !== set && !proper; sub = (sub - 1) & set) {
      if (works(sub)) proper = true;
      if (sub === 0) break;
    }
    if (!proper) minimal.push(set);
  }
  const size = (set: number) => bits(set);
  const sizes = minimal.map(size).sort((a, b) => a - b);
  const given = answer.repairs.map(
    (r) =>
      r.remove.reduce((m, i) => m | (1 << i), 0) |
      r.unreject.reduce((m, i) => m | (1 << (selected.length + i)), 0),
  );
  for (const set of given) {
    assert.ok(works(set), `a repair works: ${where}`);
    assert.ok(minimal.includes(set), `a repair is minimal: ${where}`);
  }
  assert.equal(new Set(given).size, given.length, `repairs differ: ${where}`);
  assert.deepEqual(given.map(size), sizes.slice(0, 3), `the smallest repairs, smallest first: ${where}`);
}
