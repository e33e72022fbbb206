import { it } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { changeTrip, roundTrip } from './round-trip.ts';

// Committed seeds, so npm test runs the same catalogues every time; npm run fuzz draws new ones.
const SEEDS = [20261124, 1, 2, 3, 5, 8, 13, 21, 34, 55];

describeEachDatabase('catalogue files: round trip and idempotence', (ctx) => {
  for (const seed of SEEDS) {
    it(`export, apply into an empty account and export again give the same file; seed ${seed}`, async () => {
      await roundTrip(ctx, seed);
    });
    it(`a file applied over another with prune leaves what it says, and again plans nothing; seed ${seed}`, async () => {
      await changeTrip(ctx, seed);
    });
  }
});
