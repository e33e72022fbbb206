// `npm test`: probes PostgreSQL, the browsers and tools, then runs every test file (or those named) with node:test.
// Without PostgreSQL it runs SQLite only; without a program it skips the tests that need it; each is said in a
// banner at the start and the end. CPQ_REQUIRE_POSTGRES=1 and CPQ_REQUIRE_BROWSERS=1 (CI) make an absence a failure.
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import pg from 'pg';
import { browsers, locate, tools } from '../test/helpers/externals.ts';

const adminUrl = process.env.CPQ_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const shownUrl = adminUrl.replace(/:[^:@/]*@/, ':***@');

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Test databases are named cpq_test_<pid>_<random> after the test process that made them and dropped by it. A
 * process that was killed leaves its database behind; one whose process is gone is dropped here, while those of
 * runs still going (another terminal, another checkout) are left alone.
 */
async function dropAbandonedDatabases(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    "select datname from pg_database where datname ~ '^cpq_test_[0-9]+_[0-9a-f]+$'",
  );
  for (const { datname } of rows) {
    const pid = Number(datname.split('_')[2]);
    if (!isRunning(pid)) await client.query(`drop database if exists ${datname} with (force)`);
  }
}

async function preparePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await dropAbandonedDatabases(client);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const problem = await preparePostgres();
const missing = [...browsers, ...tools].filter((external) => locate(external) === null);
const line = '!'.repeat(78);
const absent = [
  ...(problem === null
    ? []
    : [
        `PostgreSQL is not reachable at ${shownUrl}: ${problem}`,
        '   Not run: every test against PostgreSQL. The suite runs against SQLite ONLY.',
        '   Install: sudo apt-get install -y postgresql (trust for user postgres on 127.0.0.1:5432)',
      ]),
  ...missing.flatMap((external) => [
    `${external.name} is not installed (${external.variable ? `${external.variable} or ` : ''}PATH).`,
    `   Not run: ${external.tests}.`,
    `   Install: ${external.install}`,
  ]),
];
const banner = (last: string) => [line, ...absent.map((text) => `!! ${text}`), `!! ${last}`, line].join('\n');
const required = [
  ...(problem !== null && process.env.CPQ_REQUIRE_POSTGRES === '1' ? ['CPQ_REQUIRE_POSTGRES=1'] : []),
  ...(missing.length > 0 && process.env.CPQ_REQUIRE_BROWSERS === '1' ? ['CPQ_REQUIRE_BROWSERS=1'] : []),
];
if (required.length > 0) {
  console.error(banner(`${required.join(', ')}: failing instead of skipping these tests.`));
  process.exit(1);
}
if (absent.length > 0) console.error(banner('These tests are SKIPPED: the run below is not a full run.'));

// Files that measure latency or a thread's start against a budget: run after the rest, alone, so that the CPU of
// the files running beside them (browsers, fuzzing) does not land in their figures.
const alone = ['test/quotes/configure-bounded.test.ts', 'test/quotes/configure-pool.test.ts'];
const asked = process.argv.slice(2);
const phases: { files: string[]; concurrency: number }[] =
  asked.length > 0
    ? [{ files: asked, concurrency: 4 }]
    : [
        {
          files: globSync('test/**/*.test.ts')
            .filter((file) => !alone.includes(file))
            .sort(),
          concurrency: 4,
        },
        { files: alone, concurrency: 1 },
      ];

function run({ files, concurrency }: { files: string[]; concurrency: number }): Promise<number> {
  const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], {
    stdio: 'inherit',
    env: {
      ...process.env,
      CPQ_TEST_DIALECTS: problem === null ? 'sqlite,postgres' : 'sqlite',
      CPQ_TEST_MISSING: missing.map((external) => external.name).join(','),
    },
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

let failed = 0;
for (const phase of phases) {
  const code = await run(phase);
  failed ||= code;
}
// Said again at the end, where it is read: the first banner has scrolled away by now.
if (absent.length > 0) console.error(banner('These results leave out the tests above: not a full run.'));
process.exit(failed);
