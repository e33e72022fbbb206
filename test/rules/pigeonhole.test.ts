import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { compileModel, configure } from '../../src/rules/configurator.ts';
import { type Case, check, checkRepairs, pigeonholeCase } from './configurator-oracle.ts';

// The pigeonhole family (bench/rules.ts), the hardest bundles the limits allow, at the sizes the budget allows:
// against brute force where it can follow (options of up to four products), and at the sizes the configurator
// settles within the default CONFIGURE_BUDGET_MS of CPU time, with the answer the family's arithmetic gives.

describe('the pigeonhole family', () => {
  const sizes: [number, number][] = [
    [2, 1],
    [3, 2],
    [3, 3],
    [4, 3],
    [4, 4],
  ];
  for (const [pigeons, holes] of sizes) {
    it(`${pigeons} options of ${holes} products, against brute force, with and without choices`, () => {
      const bundle = pigeonholeCase(pigeons, holes);
      const requests: Pick<Case, 'selected' | 'rejected'>[] = [
        { selected: [], rejected: [] },
        { selected: [[0, 0]], rejected: [] },
        { selected: [[0, 0]], rejected: [[1, 1 % holes]] },
        {
          selected: [
            [0, 0],
            [1, 0],
          ],
          rejected: [],
        },
      ];
      for (const request of requests) {
        check({ ...bundle, ...request });
        checkRepairs({ ...bundle, ...request });
      }
    });
  }

  const budgetMs = loadConfig({}).configureBudgetMs;
  // CPU time of this thread, as the pool's threads count it.
  const spentWithin = () => {
    const started = process.threadCpuUsage();
    return () => {
      const used = process.threadCpuUsage(started);
      return used.user + used.system > budgetMs * 1000;
    };
  };
  for (const pigeons of [6, 7, 8]) {
    it(`${pigeons} options of ${pigeons - 1} products: no valid configuration, settled within the budget`, () => {
      const { options, rules } = pigeonholeCase(pigeons, pigeons - 1);
      const answer = configure(
        compileModel(options, rules),
        { chosen: [], rejected: [] },
        { maxSteps: Number.POSITIVE_INFINITY, spent: spentWithin() },
      );
      assert.equal(answer.valid, false);
      assert.ok(answer.states.every((state) => state === 'excluded'));
      assert.ok(answer.violations.length > 0);
      // Nothing was chosen, so nothing the request holds can be taken back.
      assert.deepEqual(answer.repairs, []);
    });
  }
  for (const pigeons of [8, 10]) {
    it(`${pigeons} options of ${pigeons} products: every product available, one chosen is excluded elsewhere`, () => {
      const { options, rules } = pigeonholeCase(pigeons, pigeons);
      const model = compileModel(options, rules);
      const budget = { maxSteps: Number.POSITIVE_INFINITY, spent: spentWithin() };
      const open = configure(model, { chosen: [], rejected: [] }, budget);
      assert.ok(open.valid && open.states.every((state) => state === 'available'));
      const first = model.varOf.get('opt0\nP00') as number;
      const one = configure(model, { chosen: [first], rejected: [] }, budget);
      assert.ok(one.valid);
      options.forEach((option, o) => {
        const v = model.varOf.get(`${option.id}\n${option.products[0]}`) as number;
        assert.equal(one.states[v], o === 0 ? 'selected' : 'excluded');
      });
    });
  }
});
