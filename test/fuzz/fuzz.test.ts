import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { fuzz } from './fuzzer.ts';

// A sample that keeps npm test quick; `npm run fuzz` runs thousands. CPQ_FUZZ_SEED replays a reported failure.
const runs = Number(process.env.CPQ_FUZZ_RUNS ?? 60);
const seed = process.env.CPQ_FUZZ_SEED === undefined ? undefined : Number(process.env.CPQ_FUZZ_SEED);

describeEachDatabase('schema-driven fuzzing of every operation in /openapi.json', (ctx) => {
  test(`${runs} chains of valid and invalid requests: no 5xx, declared statuses and bodies, data whole`, async () => {
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
    assert.deepEqual(report.failures, [], `seed ${report.seed} (CPQ_FUZZ_SEED=${report.seed} replays it)`);
    assert.equal(report.runs, runs);
    // The chains reach past the front door: records are created, and read, changed or deleted by later requests.
    for (const status of ['200', '201', '204', '400', '404']) {
      assert.ok((report.byStatus[status] ?? 0) > 0, `some ${status}: ${JSON.stringify(report.byStatus)}`);
    }
  });
});
