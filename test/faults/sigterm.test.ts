import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dialects } from '../helpers/database.ts';
import { sigtermDuringLoad } from './scenarios.ts';

for (const dialect of dialects) {
  test(`SIGTERM under load: every accepted request answered, exit 0, every acknowledged write kept [${dialect}]`, async () => {
    const report = await sigtermDuringLoad(dialect, { writes: 25 });
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.lost, []);
    assert.equal(report.survived, 1);
  });
}
