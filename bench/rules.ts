// Configuration rules the way a catalogue team writes them, drawn at random over a bundle's products: one product
// requires or excludes another in a different option, requires some product of an option, and conditions that
// combine two or three products with all/any/not. Both the bench catalogue (stored as the API stores them) and
// the solver measurement (bench/configure-solver.ts) draw them from here, so both measure the same kind of rules.
import type { Selector, When } from '../src/rules/rules.schemas.ts';

export interface RuleOption {
  id: string;
  products: readonly string[];
}

export interface GeneratedRule {
  name: string;
  kind: 'requires' | 'excludes';
  when: When;
  then: Selector[];
  message: string | null;
}

/**
 * `count` rules over the options: 35% product requires product, 30% product excludes product, 10% product requires
 * some product of an option, 25% a nested condition (two products both chosen, either chosen, one without the
 * other, or one with either of two) requiring or excluding one or two products. The options a rule names differ,
 * as they do in a real bundle (a rule within one option is what its counts already say).
 */
export function generateRules(random: () => number, options: readonly RuleOption[], count: number) {
  if (count > 0 && options.length < 4) throw new Error('rules are drawn over at least 4 options');
  const index = (n: number) => Math.floor(random() * n);
  const product = (o: number): Selector => {
    const option = options[o] as RuleOption;
    return { optionId: option.id, productId: option.products[index(option.products.length)] as string };
  };
  /** `n` distinct option indexes (fewer when the bundle has fewer options). */
  const distinctOptions = (n: number): number[] => {
    const picked: number[] = [];
    while (picked.length < Math.min(n, options.length)) {
      const o = index(options.length);
      if (!picked.includes(o)) picked.push(o);
    }
    return picked;
  };
  return Array.from({ length: count }, (_, r): GeneratedRule => {
    const roll = random();
    const [a, b, c, d] = distinctOptions(4) as [number, number, number, number];
    const named = (kind: GeneratedRule['kind'], when: When, then: Selector[]): GeneratedRule => ({
      name: `Rule ${r + 1}: ${kind}`,
      kind,
      when,
      then,
      message: r % 3 === 2 ? null : `Rule ${r + 1} of the catalogue team`,
    });
    if (roll < 0.35) return named('requires', product(a), [product(b)]);
    if (roll < 0.65) return named('excludes', product(a), [product(b)]);
    if (roll < 0.75) return named('requires', product(a), [{ optionId: (options[b] as RuleOption).id }]);
    const shape = index(4);
    const when: When =
      shape === 0
        ? { all: [product(a), product(b)] }
        : shape === 1
          ? { any: [product(a), product(b)] }
          : shape === 2
            ? { all: [product(a), { not: product(b) }] }
            : { all: [product(a), { any: [product(b), product(d)] }] };
    const then = random() < 0.7 ? [product(c)] : [product(c), product(c)];
    const distinct = then.filter((s, i) => then.findIndex((t) => t.productId === s.productId) === i);
    return named(random() < 0.5 ? 'requires' : 'excludes', when, distinct);
  });
}

/**
 * The pigeonhole bundle, the hardest kind of configure within the limits: `pigeons` INCLUDED options of the same
 * `holes` products, each taking one, and per option and product a rule that the product chosen there excludes it in
 * every other option. With more pigeons than holes no valid configuration exists, and any proof of that by
 * resolution (what the configurator's search amounts to) grows exponentially. The options as the API creates them.
 */
export function pigeonholeOptions(pigeons: number, holes: number) {
  return Array.from({ length: pigeons }, (_, o) => ({
    name: `Seat ${o + 1}`,
    type: 'INCLUDED' as const,
    configuration: { minCount: 1, maxCount: 1 },
    products: Array.from({ length: holes }, (_, p) => ({
      productId: `HOLE-${p + 1}`,
      properties: { name: `Hole ${p + 1}` },
    })),
  }));
}

/** The pigeonhole's rules over its options' ids (in order) and `holes` products: pigeons x holes of them. */
export function pigeonholeRules(optionIds: readonly string[], holes: number): GeneratedRule[] {
  return optionIds.flatMap((optionId) =>
    Array.from({ length: holes }, (_, p): GeneratedRule => {
      const productId = `HOLE-${p + 1}`;
      const then = optionIds
        .filter((other) => other !== optionId)
        .map((other) => ({ optionId: other, productId }));
      return {
        name: `One seat per hole ${p + 1}`,
        kind: 'excludes',
        when: { optionId, productId },
        then,
        message: null,
      };
    }),
  );
}
