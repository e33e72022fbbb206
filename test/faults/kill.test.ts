import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dialects } from '../helpers/database.ts';
import { killDuringLoad } from './scenarios.ts';

// The databases run side by side: each waits mostly on its own server processes.
describe('kill -9 under a load of creates, clones and deletes', { concurrency: true }, () => {
  for (const dialect of dialects) {
    test(`loses no acknowledged write, twice over [${dialect}]`, async () => {
      const report = await killDuringLoad(dialect, { cycles: 2, writes: 20 });
      assert.deepEqual(report.lost, []);
      assert.deepEqual(report.problems, []);
      assert.equal(report.survived, report.injected);
      assert.equal(report.injected, 2);
      assert.ok(report.figures.ackedDeletes > 0, JSON.stringify(report.figures));
    });
  }
});
