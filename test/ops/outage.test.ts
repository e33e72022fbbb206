import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/keys/keys.service.ts';
import {
  adminQuery,
  createTestDatabase,
  databaseEnv,
  dialects,
  type TestDatabase,
} from '../helpers/database.ts';
import { type ServerProcess, startServer } from './server-process.ts';

describe('losing PostgreSQL and getting it back [postgres]', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let name = '';
  let key = '';
  let server: ServerProcess;

  const get = async (path: string, withKey = true) => {
    const response = await fetch(`${server.address}${path}`, {
      headers: withKey ? { 'x-api-key': key } : {},
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : null };
  };

  /** The database refuses new connections and every open one is cut, as when the server goes away. */
  const cut = async () => {
    await adminQuery(`alter database ${name} allow_connections false`);
    await adminQuery(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
  };
  const restore = () => adminQuery(`alter database ${name} allow_connections true`);

  before(async () => {
    database = await createTestDatabase('postgres');
    name = new URL(database.databaseUrl as string).pathname.slice(1);
    key = (await createKey(database.handle.db, { accountId: 'acme', name: null, readOnly: false })).plaintext;
    // The test's own pool would only be cut too; the server is the subject.
    await database.handle.db.destroy();
    server = await startServer(databaseEnv(database));
  });

  after(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await restore().catch(() => {});
    await adminQuery(`drop database if exists ${name} with (force)`);
  });

  test('requests get 503 problems while it is gone, the process stays up, and service resumes by itself', async () => {
    assert.equal((await get('/v1/bundles')).status, 200);
    assert.equal((await get('/readyz', false)).status, 200);
    // Remembered by the process, so the details' one statement is what meets the outage (and its 503 is final).
    const details = '/v1/bundles-details?bundleIds=bnd_01M7Z4FGHN62EHBXHK2BWGA38Q';
    assert.equal((await get(details)).status, 200);

    await cut();
    for (const path of ['/v1/bundles', '/v1/bundles', details, details, '/readyz']) {
      const result = await get(path, path !== '/readyz');
      assert.equal(result.status, 503, `${path}: ${result.text}`);
      assert.match(String(result.headers.get('content-type')), /^application\/problem\+json/);
      assert.equal(result.body.code, 'service_unavailable');
      assert.equal(result.headers.get('retry-after'), '1');
      assert.equal(result.headers.get('x-request-id'), result.body.requestId);
    }
    const health = await get('/healthz', false);
    assert.equal(health.status, 200, 'the process itself is up');
    assert.equal(server.child.exitCode, null);

    await restore();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      status = (await get('/v1/bundles')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200, 'service resumes without a restart');
    // Its statement was prepared on connections that are gone: the new ones prepare it again.
    assert.equal((await get(details)).status, 200);
    assert.equal((await get('/readyz', false)).status, 200);
    assert.ok(
      server.logs().some((line) => line.msg === 'database connection lost'),
      'idle connections that were cut are logged, not fatal',
    );

    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null }, server.stderr());
  });
});
