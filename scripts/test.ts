// `npm test`: probes PostgreSQL, then runs every test file with node:test against the databases it can reach.
// Without PostgreSQL it says so loudly and runs SQLite only, unless CPQ_REQUIRE_POSTGRES=1 (CI), where that fails.
import { spawn } from 'node:child_process';
import pg from 'pg';

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
const line = '!'.repeat(78);
const banner = `${line}\n!! PostgreSQL is not reachable at ${shownUrl}: ${problem}\n`;
let dialects = 'sqlite,postgres';
if (problem !== null) {
  if (process.env.CPQ_REQUIRE_POSTGRES === '1') {
    console.error(`${banner}!! CPQ_REQUIRE_POSTGRES=1: failing instead of running SQLite only.\n${line}`);
    process.exit(1);
  }
  console.error(
    `${banner}!! Running the suite against SQLite ONLY. PostgreSQL results are missing.\n${line}`,
  );
  dialects = 'sqlite';
}

const files = process.argv.slice(2);
const child = spawn(
  process.execPath,
  ['--test', '--test-concurrency=4', ...(files.length > 0 ? files : ['test/**/*.test.ts'])],
  { stdio: 'inherit', env: { ...process.env, CPQ_TEST_DIALECTS: dialects } },
);
child.on('exit', (code, signal) => {
  // Said again at the end, where it is read: the first banner has scrolled away by now.
  if (problem !== null) console.error(`${banner}!! These results are for SQLite ONLY.\n${line}`);
  process.exit(code ?? (signal ? 1 : 0));
});
