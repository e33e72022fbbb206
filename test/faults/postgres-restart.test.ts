import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dialects } from '../helpers/database.ts';
import { postgresRestartDuringLoad } from './scenarios.ts';

// It stops the PostgreSQL server every other test file shares, so npm test leaves it out: `npm run fuzz` runs it
// (or CPQ_FAULTS_POSTGRES_RESTART=1 node --test test/faults/postgres-restart.test.ts).
const enabled = process.env.CPQ_FAULTS_POSTGRES_RESTART === '1' && dialects.includes('postgres');

test('PostgreSQL restarted under load: 503 problems while it is down, no hang, no crash, full service after', {
  skip: enabled ? false : 'set CPQ_FAULTS_POSTGRES_RESTART=1 (it stops the shared PostgreSQL server)',
}, async () => {
  const report = await postgresRestartDuringLoad({ writes: 25 });
  assert.deepEqual(report.problems, []);
  assert.deepEqual(report.lost, []);
  assert.equal(report.survived, 1);
});
