import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { fuzz } from './fuzzer.ts';
import { committedSeeds } from './seeds.ts';

// The committed seeds keep npm test deterministic; `npm run fuzz` explores new ones. CPQ_FUZZ_SEED (with
// CPQ_FUZZ_RUNS) replays one reported seed instead.
const replay =
  process.env.CPQ_FUZZ_SEED === undefined
    ? undefined
    : { seed: Number(process.env.CPQ_FUZZ_SEED), runs: Number(process.env.CPQ_FUZZ_RUNS ?? 60) };

describeEachDatabase('schema-driven fuzzing of every operation in /openapi.json', (ctx) => {
  for (const { seed, runs } of replay ? [replay] : committedSeeds) {
    test(`seed ${seed}, ${runs} chains of valid and invalid requests: no 5xx, declared statuses and bodies, data whole`, async () => {
      const report = await fuzz(
        {
          app: ctx.app,
          db: ctx.db,
          accounts: [
            { id: 'acme', key: ctx.key },
            { id: 'fuzz-other', key: await ctx.newKey('fuzz-other') },
          ],
          readOnlyKey: await ctx.newKey('acme', { readOnly: true }),
          bodyLimit: ctx.config.bodyLimit,
        },
        { runs, seed },
      );
      assert.deepEqual(
        report.failures,
        [],
        `seed ${seed} (CPQ_FUZZ_SEED=${seed} CPQ_FUZZ_RUNS=${runs} replays it)`,
      );
      assert.equal(report.runs, runs);
      // The chains reach past the front door: records are created, and read, changed or deleted by later requests.
      for (const status of ['200', '201', '204', '400', '404']) {
        assert.ok((report.byStatus[status] ?? 0) > 0, `some ${status}: ${JSON.stringify(report.byStatus)}`);
      }
    });
  }
});
