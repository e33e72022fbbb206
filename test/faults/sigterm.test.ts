import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dialects } from '../helpers/database.ts';
import { sigtermDuringLoad } from './scenarios.ts';

// The databases run side by side: each waits mostly on its own server processes.
describe('SIGTERM under load', { concurrency: true }, () => {
  for (const dialect of dialects) {
    test(`every accepted request answered, exit 0, every acknowledged write kept [${dialect}]`, async () => {
      const report = await sigtermDuringLoad(dialect, { writes: 20 });
      assert.deepEqual(report.problems, []);
      assert.deepEqual(report.lost, []);
      assert.equal(report.survived, 1);
    });
  }
});
