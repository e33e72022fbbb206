import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { createBundle } from '../helpers/factories.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';

const workersPerProcess = 4;
const writesPerWorker = 12;

// Two `cpq serve` processes on one database, as an operator scales out. On SQLite they share the file, and a write
// must wait for the other process's transaction to end rather than fail: transactions that began by reading could
// not take the write lock once the other process had committed, and answered 503 at once.
describeEachDatabase('writes from two processes on one database', (ctx) => {
  const servers: ServerProcess[] = [];

  before(async () => {
    const env = { ...databaseEnv(ctx.database), RATE_LIMIT_PER_SECOND: '0' };
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
  });

  after(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
  });

  test('concurrent clones and price writes through both all succeed', async () => {
    const { bundle, options } = await createBundle(ctx);
    const book = options[0].priceBookId;
    const answers: { status: number; text: string }[] = [];
    const send = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.address}${path}`, {
        method,
        headers: { 'x-api-key': ctx.key, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      answers.push({ status: response.status, text: await response.text() });
    };
    const worker = async (server: ServerProcess, w: number) => {
      for (let i = 0; i < writesPerWorker; i++) {
        if ((w + i) % 2 === 0) {
          await send(server, 'POST', `/v1/bundles/${bundle.id}/clone`, {});
        } else {
          await send(server, 'PUT', `/v1/pricebooks/${book}/prices`, [
            { productId: 'BASE-S', currency: 'USD', standardPrice: i + 1 },
          ]);
        }
      }
    };
    await Promise.all(
      servers.flatMap((server) => Array.from({ length: workersPerProcess }, (_, w) => worker(server, w))),
    );
    const failed = answers.filter((a) => a.status >= 300);
    assert.equal(answers.length, servers.length * workersPerProcess * writesPerWorker);
    assert.deepEqual(failed.slice(0, 3), [], `${failed.length} of ${answers.length} writes failed`);
  });
});

const heldMs = 400;

/** Holds the write lock another process would hold (SQLite: the file's; PostgreSQL: the bundle's row) for a while. */
async function holdLock(ctx: TestContext, bundleId: string) {
  if (ctx.dialect === 'sqlite') {
    const other = new DatabaseSync(ctx.database.sqlitePath);
    other.exec('BEGIN IMMEDIATE');
    return async () => {
      other.exec('COMMIT');
      other.close();
    };
  }
  const other = new pg.Client({ connectionString: ctx.database.databaseUrl ?? '' });
  await other.connect();
  await other.query('begin');
  await other.query('select 1 from bundles where account_id = $1 and id = $2 for update', ['acme', bundleId]);
  return async () => {
    await other.query('commit');
    await other.end();
  };
}

describeEachDatabase("a write meeting another connection's lock", (ctx) => {
  test('waits for it, and the process keeps answering meanwhile', async () => {
    const { bundle, options } = await createBundle(ctx);
    const release = await holdLock(ctx, bundle.id);
    const started = Date.now();
    let answered = false;
    const write = ctx
      .call('PUT', `/v1/pricebooks/${options[0].priceBookId}/prices`, {
        body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: 3 }],
      })
      .finally(() => {
        answered = true;
      });
    await sleep(heldMs / 2);
    const health = await ctx.call('GET', '/healthz', { key: null });
    assert.equal(health.status, 200);
    assert.equal(answered, false, 'the write is still waiting for the lock');
    await sleep(heldMs / 2);
    await release();
    const result = await write;
    assert.equal(result.status, 200, result.text);
    assert.ok(Date.now() - started >= heldMs, 'the write waited for the lock');
  });
});
