import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RandomShape, randomBundle } from '../../bench/random-bundles.ts';
import { loadConfig } from '../../src/config.ts';
import { configure, type Model, type ModelOption } from '../../src/rules/configurator.ts';
import type { ModelRule } from '../../src/rules/rule-logic.ts';
import { validByBruteForce } from './configurator-oracle.ts';

// The configurator at the bench's size (12 options x 25 products), where brute force cannot follow: committed random
// bundles with 60 and 500 rules of both families (bench/random-bundles.ts), nothing chosen and a click each. Every
// answer comes within the default CONFIGURE_MAX_STEPS; its completion is a valid configuration by the oracle's
// own reading of the rules; and its states agree with the answers to the requests that act on them: an excluded
// product selected leaves nothing valid, a required one rejected leaves nothing valid, an available one can be
// either selected or rejected.

const BUNDLES = 10;
const maxSteps = loadConfig({}).configureMaxSteps;
const shapes: RandomShape[] = [60, 500].flatMap((rules) =>
  (['catalogue', 'random'] as const).map((family) => ({ options: 12, productsPerOption: 25, rules, family })),
);

/** The configuration as one bitmask of products per option, as the oracle reads it. */
function masksOf(model: Model, options: ModelOption[], config: Int8Array): number[] {
  return options.map((option) =>
    option.products.reduce(
      (mask, productId, p) =>
        config[model.varOf.get(`${option.id}\n${productId}`) as number] ? mask | (1 << p) : mask,
      0,
    ),
  );
}

function checkRequest(model: Model, options: ModelOption[], rules: ModelRule[], chosen: number[]): void {
  const ask = (selected: number[], rejected: number[] = []) =>
    configure(model, { chosen: selected, rejected }, { maxSteps });
  const answer = ask(chosen);
  if (!answer.valid) {
    assert.equal(answer.completion, null);
    return;
  }
  const completion = answer.completion as Int8Array;
  assert.ok(
    validByBruteForce(options, rules, masksOf(model, options, completion)),
    'the completion is valid',
  );
  answer.states.forEach((state, v) => {
    if (state === 'selected' || state === 'required') assert.equal(completion[v], 1, `${state} ${v} held`);
    if (state === 'excluded') assert.equal(completion[v], 0, `excluded ${v} left out`);
  });
  for (let v = 0; v < answer.states.length; v += 20) {
    const state = answer.states[v];
    if (state === 'selected') continue;
    if (state !== 'required') assert.equal(ask([...chosen, v]).valid, state === 'available', `${v} selected`);
    if (state !== 'excluded') assert.equal(ask(chosen, [v]).valid, state === 'available', `${v} rejected`);
  }
}

describe('configure on large random bundles', () => {
  for (const shape of shapes) {
    it(`${shape.rules} ${shape.family} rules, ${BUNDLES} bundles: within the budget, states consistent`, () => {
      for (let b = 0; b < BUNDLES; b++) {
        const { options, rules, model, click } = randomBundle(shape, 20261124 + b);
        for (const chosen of [[], click]) checkRequest(model, options, rules, chosen);
      }
    });
  }
});
