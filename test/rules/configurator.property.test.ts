import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bundleCase, type Case, check } from './configurator-oracle.ts';

// Committed seeds, so npm test runs the same cases every time; npm run fuzz explores others.
const SEEDS = [20261124, 7, 4242, 11, 12];
const RUNS = 1000;

// Cases that once failed, kept as they were found.
const REGRESSIONS: [string, Case][] = [
  [
    // Fuzz seed 11: 2^19 configurations, which the oracle spread into Math.min, past the stack's size.
    'five options of four products, one rule',
    {
      options: [
        {
          id: 'opt0',
          type: 'ADD_ON',
          minCount: null,
          maxCount: 3,
          defaultProductId: 'P01',
          products: ['P00', 'P01', 'P02', 'P03'],
        },
        {
          id: 'opt1',
          type: 'ADD_ON',
          minCount: 0,
          maxCount: null,
          defaultProductId: 'P13',
          products: ['P10', 'P11', 'P12', 'P13'],
        },
        {
          id: 'opt2',
          type: 'INCLUDED',
          minCount: null,
          maxCount: null,
          defaultProductId: null,
          products: ['P20', 'P21', 'P22'],
        },
        {
          id: 'opt3',
          type: 'INCLUDED',
          minCount: 0,
          maxCount: null,
          defaultProductId: 'P31',
          products: ['P30', 'P31', 'P32', 'P33'],
        },
        {
          id: 'opt4',
          type: 'INCLUDED',
          minCount: null,
          maxCount: 2,
          defaultProductId: 'P42',
          products: ['P40', 'P41', 'P42', 'P43'],
        },
      ],
      rules: [
        {
          kind: 'requires',
          when: { optionId: 'opt2', productId: 'P22' },
          then: [{ optionId: 'opt0', productId: 'P03' }],
          id: 'rul0',
          name: 'rule 0',
          message: 'm0',
        },
      ],
      selected: [],
      rejected: [],
    },
  ],
];

describe('configure against brute force', () => {
  for (const seed of SEEDS) {
    it(`every state, valid, complete and completion, ${RUNS} bundles of seed ${seed}`, () => {
      fc.assert(fc.property(bundleCase, check), { seed, numRuns: RUNS });
    });
  }
  for (const [name, found] of REGRESSIONS) it(`regression: ${name}`, () => check(found));
});
