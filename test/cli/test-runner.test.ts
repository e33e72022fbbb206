// `npm test`'s own runner (scripts/test.ts) on a machine without the browsers: no chromium or firefox-esr on PATH
// and CPQ_CHROMIUM_PATH naming nothing. It passes with the banner naming what it did not run and how to install it;
// with CPQ_REQUIRE_BROWSERS=1 (CI) it fails instead. Only the Firefox file runs, for speed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const projectRoot = join(import.meta.dirname, '../..');
const emptyDir = mkdtempSync(join(tmpdir(), 'cpq-no-browsers-'));
after(() => rmSync(emptyDir, { recursive: true, force: true }));

function runSuite(extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: emptyDir,
    CPQ_CHROMIUM_PATH: join(emptyDir, 'chromium'),
    ...extra,
  };
  // Left by node --test for its own children: the runner's node --test would report to this process, not print.
  delete env.NODE_TEST_CONTEXT;
  delete env.CPQ_FIREFOX_PATH;
  delete env.CPQ_REQUIRE_POSTGRES;
  delete env.CPQ_TEST_MISSING;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/test.ts', 'test/console/firefox.test.ts'], {
      cwd: projectRoot,
      env,
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('without the browsers the suite passes, skipping their tests, with a banner at its start and end', async () => {
  const { code, output } = await runSuite({ CPQ_REQUIRE_BROWSERS: '' });
  assert.equal(code, 0, output);
  for (const name of ['chromium', 'firefox-esr']) {
    const said = output.split(`!! ${name} is not installed`).length - 1;
    assert.equal(said, 2, `${name} named at the start and the end:\n${output}`);
    assert.ok(output.includes(`Install: sudo apt-get install -y ${name}`), output);
  }
  assert.match(output, /Not run: the console in Firefox/);
  assert.match(output, /The console in Firefox \[sqlite\].*# firefox-esr is not installed/);
  assert.match(output, /ℹ fail 0/);
});

test('with CPQ_REQUIRE_BROWSERS=1 a missing browser fails the run', async () => {
  const { code, output } = await runSuite({ CPQ_REQUIRE_BROWSERS: '1' });
  assert.equal(code, 1, output);
  assert.match(output, /CPQ_REQUIRE_BROWSERS=1: failing instead of skipping/);
  assert.match(output, /firefox-esr is not installed/);
});
