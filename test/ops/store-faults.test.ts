import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';
import { createTestDatabase, databaseEnv, dialects } from '../helpers/database.ts';
import { projectRoot } from './server-process.ts';

/**
 * Runs `cpq serve` to its exit. Root may write any file whatever its mode, so a store is made read-only for the
 * server by running it as nobody when the tests run as root.
 */
async function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const asRoot = process.getuid?.() === 0;
  const child = spawn(process.execPath, ['src/cli.ts', 'serve'], {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // A server that started after all is the failure this test looks for; it must not outlive the test.
  const limit = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = await once(child, 'exit');
  clearTimeout(limit);
  return { code, stderr };
}

async function migratedSqliteFile(): Promise<{ folder: string; path: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'cpq-readonly-'));
  const path = join(folder, 'cpq.sqlite');
  const { db } = connect({ databaseUrl: null, sqlitePath: path });
  await migrateToLatest(db);
  await db.destroy();
  chmodSync(path, 0o666);
  return { folder, path };
}

for (const [what, makeReadOnly] of [
  ['file', (_folder: string, path: string) => chmodSync(path, 0o444)],
  ['folder', (folder: string) => chmodSync(folder, 0o555)],
] as const) {
  test(`cpq serve refuses a read-only SQLite ${what} with one line, exit 1 [sqlite]`, async () => {
    const { folder, path } = await migratedSqliteFile();
    chmodSync(folder, 0o777);
    try {
      makeReadOnly(folder, path);
      const { code, stderr } = await serveUntilExit({ SQLITE_PATH: path });
      assert.equal(code, 1, stderr);
      assert.equal(stderr, `cpq: the database at ${path} cannot be used: the database is read-only\n`);
    } finally {
      chmodSync(folder, 0o755);
      rmSync(folder, { recursive: true, force: true });
    }
  });
}

test('cpq serve refuses a read-only PostgreSQL database with one line, exit 1 [postgres]', {
  skip: !dialects.includes('postgres'),
}, async () => {
  const database = await createTestDatabase('postgres');
  const name = new URL(database.databaseUrl as string).pathname.slice(1);
  try {
    await database.handle.db.destroy();
    const client = new pg.Client({ connectionString: database.databaseUrl as string });
    await client.connect();
    await client.query(`alter database ${name} set default_transaction_read_only = on`);
    await client.end();
    const { code, stderr } = await serveUntilExit(databaseEnv(database));
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      /^cpq: the database at postgres:\/\/\S+ cannot be used: the database is read-only\n$/,
    );
  } finally {
    await database.drop();
  }
});

describeEachDatabase('faults of the store', (ctx) => {
  const body = { header: { productId: 'LAPTOP', properties: {} } };

  test('a table dropped under the running service: 503 with Retry-After, and /readyz says why', async () => {
    assert.equal((await ctx.call('GET', '/readyz')).status, 200);
    await sql`drop table idempotency_keys`.execute(ctx.db);

    const written = await ctx.call('POST', '/v1/bundles', { body, headers: { 'idempotency-key': 'k-1' } });
    assertProblem(written, 503, 'service_unavailable');
    assert.equal(written.headers['retry-after'], '1');
    assert.equal(written.body.detail, 'Tables of the database are missing; try again shortly');

    const ready = await ctx.call('GET', '/readyz');
    assertProblem(ready, 503, 'service_unavailable');
    assert.equal(ready.body.detail, 'Not ready: tables of the database are missing');
    assert.equal((await ctx.call('GET', '/healthz')).status, 200, 'the process itself is fine');
  });
});

describeEachDatabase('a full SQLite store', (ctx) => {
  test('writes needing room get 503, nothing is half-written, /readyz says why, and both mend', async (t) => {
    if (ctx.dialect !== 'sqlite') return t.skip('a page limit is SQLite’s own way to fill the store');
    // 200 KB: more pages than any free list of the store holds.
    const properties = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`note${i}`, 'x'.repeat(10_000)]),
    );
    const body = { header: { productId: 'LAPTOP', properties } };
    const [{ pages = 0 } = {}] = (
      await sql<{ pages: number }>`select page_count as pages from pragma_page_count`.execute(ctx.db)
    ).rows;
    // SQLite itself refuses to grow the file past this: the store is full, for real, at its current size.
    await sql.raw(`pragma max_page_count = ${pages}`).execute(ctx.db);
    try {
      const written = await ctx.call('POST', '/v1/bundles', {
        body,
        headers: { 'idempotency-key': 'full-1' },
      });
      assertProblem(written, 503, 'service_unavailable');
      assert.equal(written.headers['retry-after'], '1');
      assert.equal(written.body.detail, 'The database storage is full; try again shortly');
      const ready = await ctx.call('GET', '/readyz');
      assertProblem(ready, 503, 'service_unavailable');
      assert.equal(ready.body.detail, 'Not ready: the database storage is full');
      assert.deepEqual((await ctx.call('GET', '/v1/bundles')).body.bundles, [], 'nothing half-written');
    } finally {
      await sql.raw('pragma max_page_count = 4294967294').execute(ctx.db);
    }
    const retried = await ctx.call('POST', '/v1/bundles', { body, headers: { 'idempotency-key': 'full-1' } });
    assert.equal(retried.status, 201, retried.text);
  });
});
