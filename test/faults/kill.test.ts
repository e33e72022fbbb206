import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dialects } from '../helpers/database.ts';
import { killDuringLoad } from './scenarios.ts';

for (const dialect of dialects) {
  test(`kill -9 under a load of creates, clones and deletes loses no acknowledged write [${dialect}]`, async () => {
    const report = await killDuringLoad(dialect, { cycles: 2, writes: 25 });
    assert.deepEqual(report.lost, []);
    assert.deepEqual(report.problems, []);
    assert.equal(report.survived, report.injected);
    assert.equal(report.injected, 2);
    assert.ok(report.figures.ackedDeletes > 0, JSON.stringify(report.figures));
  });
}
