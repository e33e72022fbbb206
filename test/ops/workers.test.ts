import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/keys/keys.service.ts';
import { createTestDatabase, databaseEnv, dialects, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from './server-process.ts';

/** The pids of a process's children, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // Fields after the command name, which may hold spaces: the parent pid is the second.
        return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const dialect of dialects) {
  describe(`cpq serve --workers 2 [${dialect}]`, () => {
    let database: TestDatabase;
    let key = '';
    let server: ServerProcess;
    const call = (path: string, init: RequestInit = {}) =>
      // A new connection per request: the primary deals connections out to the workers in turn.
      fetch(`${server.address}${path}`, {
        ...init,
        headers: { 'x-api-key': key, connection: 'close', ...init.headers },
      });

    before(async () => {
      database = await createTestDatabase(dialect);
      key = (await createKey(database.handle.db, { accountId: 'acme', name: null, readOnly: false }))
        .plaintext;
      server = await startServer(databaseEnv(database), ['--workers', '2']);
    });

    after(async () => {
      for (const pid of server ? childrenOf(server.child.pid as number) : []) process.kill(pid, 'SIGKILL');
      if (server?.child.exitCode === null) server.child.kill('SIGKILL');
      await database?.drop();
    });

    test('two worker processes serve one port, and every read sees the last write whichever serves it', async () => {
      const ready = server.logs().find((line) => line.msg === 'cpq is ready');
      assert.equal(ready?.workers, 2);
      assert.equal(childrenOf(server.child.pid as number).length, 2);
      // The primary hears each worker listen before that worker's own log line is written.
      await until(
        () => server.logs().filter((line) => line.msg === 'worker is ready').length === 2,
        'logged',
      );

      const created = await call('/v1/bundles', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ header: { productId: 'LAPTOP', properties: {} } }),
      });
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: string };
      for (let version = 1; version <= 4; version++) {
        const edition = `version ${version}`;
        const patched = await call(`/v1/bundles/${id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ header: { productId: 'LAPTOP', properties: { edition } } }),
        });
        assert.equal(patched.status, 200, await patched.text());
        // Each worker caches details; the stamps keep every one of them current.
        for (let read = 0; read < 4; read++) {
          const details = (await (await call(`/v1/bundles-details?bundleIds=${id}`)).json()) as {
            bundles: { header: { properties: { edition: string } } }[];
          };
          assert.equal(details.bundles[0]?.header.properties.edition, edition);
        }
      }
    });

    test('a worker that dies is replaced, and the service goes on', async () => {
      const [victim] = childrenOf(server.child.pid as number);
      assert.ok(victim);
      process.kill(victim, 'SIGKILL');
      await server.waitForLog((line) => line.msg === 'a worker exited; starting another');
      await until(
        () => server.logs().filter((line) => line.msg === 'worker is ready').length === 3,
        'replaced',
      );
      assert.equal(childrenOf(server.child.pid as number).length, 2);
      for (let i = 0; i < 6; i++) assert.equal((await call('/v1/bundles')).status, 200);
    });

    test('SIGTERM stops every worker gracefully and the primary exits 0', async () => {
      const workers = childrenOf(server.child.pid as number);
      server.child.kill('SIGTERM');
      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
      assert.equal(
        server.logs().filter((line) => line.msg === 'stopped').length,
        3,
        'two workers and the primary',
      );
      for (const pid of workers) assert.equal(alive(pid), false);
    });
  });
}
