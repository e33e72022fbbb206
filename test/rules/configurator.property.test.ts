import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bundleCase, check } from './configurator-oracle.ts';

// Committed seeds, so npm test runs the same cases every time; npm run fuzz explores others.
const SEEDS = [20261124, 7, 4242];
const RUNS = 1000;

describe('configure against brute force', () => {
  for (const seed of SEEDS) {
    it(`every state, valid, complete and completion, ${RUNS} bundles of seed ${seed}`, () => {
      fc.assert(fc.property(bundleCase, check), { seed, numRuns: RUNS });
    });
  }
});
