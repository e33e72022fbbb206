// `npm test`: probes PostgreSQL, then runs every test file with node:test against the databases it can reach.
// Without PostgreSQL it says so loudly and runs SQLite only, unless CPQ_REQUIRE_POSTGRES=1 (CI), where that fails.
import { spawn } from 'node:child_process';
import pg from 'pg';

const adminUrl = process.env.CPQ_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function postgresReachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const problem = await postgresReachable();
let dialects = 'sqlite,postgres';
if (problem !== null) {
  const line = '!'.repeat(78);
  console.error(
    `${line}\n!! PostgreSQL is not reachable at ${adminUrl.replace(/:[^:@/]*@/, ':***@')}: ${problem}`,
  );
  if (process.env.CPQ_REQUIRE_POSTGRES === '1') {
    console.error(`!! CPQ_REQUIRE_POSTGRES=1: failing instead of running SQLite only.\n${line}`);
    process.exit(1);
  }
  console.error(`!! Running the suite against SQLite ONLY. PostgreSQL results are missing.\n${line}`);
  dialects = 'sqlite';
}

const files = process.argv.slice(2);
const child = spawn(
  process.execPath,
  ['--test', '--test-concurrency=4', ...(files.length > 0 ? files : ['test/**/*.test.ts'])],
  { stdio: 'inherit', env: { ...process.env, CPQ_TEST_DIALECTS: dialects } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
