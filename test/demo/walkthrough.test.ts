// The README walkthrough, run as written: its shell blocks go to bash (with curl, jq and `npm run -s cpq --`) against
// the service on a port, and every output the README shows after a command must be what the command prints. A
// shown output may leave parts out with `...`: then each `"name":value` it shows must be in the printed one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { requirePath, skipWithout } from '../helpers/externals.ts';

const projectRoot = join(import.meta.dirname, '../..');
const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
const marker = '@@walkthrough@@';
// The walkthrough's $TMPDIR, where it keeps the demo's ids.
const scratch = mkdtempSync(join(tmpdir(), 'cpq-walkthrough-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Step {
  commands: string;
  shown: string;
}

/** The walkthrough's shell, cut after each output it shows; the text after the last one is dropped. */
function walkthroughSteps(text: string): Step[] {
  const section = text.slice(
    text.indexOf('## Walkthrough'),
    text.indexOf('\n## ', text.indexOf('## Walkthrough') + 1),
  );
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    (block[1] ?? '').split('\n'),
  );
  const steps: Step[] = [];
  let commands: string[] = [];
  for (const line of lines) {
    const shown = /^# ?(.*)$/.exec(line)?.[1];
    const last = steps.at(-1);
    if (shown === undefined) commands.push(line);
    else if (shown.startsWith('  ') && commands.length === 0 && last) last.shown += shown.trim();
    else if (/^(\d{3}\b.*?)?[[{]/.test(shown)) {
      steps.push({ commands: commands.join('\n'), shown });
      commands = [];
    } else commands.push(line);
  }
  return steps;
}

/** What each `"name":value` pair of a shown output says, for outputs shown in part. */
function shownPairs(shown: string): string[] {
  return shown.match(/"[\w.]+":(?:"[^"]*"|-?\d+(?:\.\d+)?|true|false|null|\[\])/g) ?? [];
}

function runBash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd: projectRoot, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the walkthrough shows outputs after its commands', () => {
  const steps = walkthroughSteps(readme);
  assert.ok(steps.length >= 8, `${steps.length} outputs shown`);
  assert.ok(
    steps.some((s) => s.commands.includes('/configure')),
    'a configure call',
  );
  assert.ok(
    steps.some((s) => s.commands.includes('/rules')),
    'a rule',
  );
});

describeEachDatabase(
  'The README walkthrough, run as written',
  { skip: skipWithout('jq') || skipWithout('curl') },
  (ctx) => {
    let base: string;

    before(async () => {
      requirePath('jq');
      requirePath('curl');
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    });

    test('every output it shows is what its commands print', async () => {
      const steps = walkthroughSteps(readme);
      const script = steps
        .map((step) => `${step.commands}\nprintf '\\n${marker}\\n'`)
        .join('\n')
        .replaceAll('http://127.0.0.1:3000', base);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...databaseEnv(ctx.database),
        LOG_LEVEL: 'silent',
        TMPDIR: scratch,
      };
      delete env.NODE_TEST_CONTEXT;
      const { code, stdout, stderr } = await runBash(`set -e\n${script}`, env);
      assert.equal(code, 0, stderr);
      const outputs = stdout.split(`\n${marker}\n`);
      for (const [i, step] of steps.entries()) {
        const printed = (outputs[i] ?? '').trim().split('\n').join('');
        const where = `after:\n${step.commands.trim()}\nshown:   ${step.shown}\nprinted: ${printed}`;
        const json = step.shown.replace(/^\d{3}\b[^[{]*/, '');
        let whole: unknown;
        try {
          whole = JSON.parse(json);
        } catch {
          // A value shown as `"bnd_..."` is a prefix of the printed one.
          for (const pair of shownPairs(json)) {
            assert.ok(printed.includes(pair.replace(/\.\.\."$/, '')), `${pair} ${where}`);
          }
          continue;
        }
        assert.deepEqual(JSON.parse(printed), whole, where);
      }
    });
  },
);
