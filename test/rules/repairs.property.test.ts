import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bundleCase, checkRepairs } from './configurator-oracle.ts';

// Committed seeds, so npm test runs the same cases every time. Only requests no valid configuration extends have
// repairs; the others are checked to have none.
const SEEDS = [20261201, 3, 977];
const RUNS = 400;

describe('repairs against brute force', () => {
  for (const seed of SEEDS) {
    it(`each works, is minimal, and they are the smallest: ${RUNS} requests of seed ${seed}`, () => {
      fc.assert(fc.property(bundleCase, checkRepairs), { seed, numRuns: RUNS });
    });
  }
});
