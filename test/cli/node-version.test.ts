// bin/cpq.js run by a Node older than the one it needs: one line naming the Node it needs, exit 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const asNode = (version: string) =>
  `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;

test('bin/cpq.js under a Node older than 24 says which Node it needs, in one line, and exits 2', () => {
  const run = spawnSync(process.execPath, ['--import', asNode('20.20.2'), 'bin/cpq.js', '--help'], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 2);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr, 'cpq needs Node.js 24 or later; this is Node.js 20.20.2.\n');
});
