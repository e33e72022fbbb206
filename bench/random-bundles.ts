// Seeded random bundles for measuring and testing the configurator at the bench's size: options shaped like the
// bench catalogue's (a third INCLUDED with 1..3 products and a default, the rest ADD_ON with 0..5 or any), and one
// of two families of rules: `catalogue`, drawn by bench/rules.ts as a catalogue team writes them (the bench's), or
// `random`, drawn by the property test's generator (either kind, conditions nested up to four levels over products
// and options, one to three selectors in `then`), which binds options far more tightly. Used by
// bench/configure-solver.ts and test/rules/configurator.large.test.ts; the same seed gives the same bundle.
import fc from 'fast-check';
import { compileModel, type ModelOption } from '../src/rules/configurator.ts';
import type { ModelRule } from '../src/rules/rule-logic.ts';
import { seededRandom } from '../test/helpers/random.ts';
import { ruleOf } from '../test/rules/configurator-oracle.ts';
import { optionCounts } from './catalogue.ts';
import { generateRules } from './rules.ts';

export interface RandomShape {
  options: number;
  productsPerOption: number;
  rules: number;
  family: 'catalogue' | 'random';
}

/** A bundle of the shape compiled, its options and rules, and a click: one to three of its products, at random. */
export function randomBundle(shape: RandomShape, seed: number) {
  const random = seededRandom(seed);
  const included = Math.ceil(shape.options / 3);
  const options = Array.from({ length: shape.options }, (_, o): ModelOption => {
    const type = o < included ? 'INCLUDED' : 'ADD_ON';
    const products = Array.from({ length: shape.productsPerOption }, (_, p) => `P${o}-${p}`);
    return {
      id: `opt${o}`,
      type,
      ...optionCounts(type, o, shape.productsPerOption),
      defaultProductId: type === 'INCLUDED' ? (products[0] as string) : null,
      products,
    };
  });
  const drawn =
    shape.family === 'catalogue'
      ? generateRules(random, options, shape.rules)
      : (fc.sample(fc.array(ruleOf(options), { minLength: shape.rules, maxLength: shape.rules }), {
          seed,
          numRuns: 1,
        })[0] ?? []);
  const rules = drawn.map(
    (rule, r): ModelRule => ({ name: `rule ${r}`, message: null, ...rule, id: `rul${r}` }),
  );
  const model = compileModel(options, rules);
  const picks = 1 + Math.floor(random() * 3);
  const chosen = new Set<number>();
  while (chosen.size < picks) chosen.add(Math.floor(random() * model.productOf.length));
  return { options, rules, model, click: [...chosen] };
}
