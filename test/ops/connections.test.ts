import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, databaseEnv, dialects, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from './server-process.ts';

interface Idle {
  socket: Socket;
  received(): string;
  /** Whether the server has ended or cut the connection. */
  ended(): boolean;
}

/**
 * A connection that sends `text` (nothing by default) and then neither sends, reads to its end nor closes: its
 * half stays open after the server's FIN, as a hostile client's does.
 */
async function openIdle(address: string, text = ''): Promise<Idle> {
  const socket = connectTcp({ port: Number(new URL(address).port), host: '127.0.0.1', allowHalfOpen: true });
  let received = '';
  let ended = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('end', () => {
    ended = true;
  });
  socket.on('close', () => {
    ended = true;
  });
  socket.on('error', () => {});
  await once(socket, 'connect');
  if (text !== '') socket.write(text);
  return { socket, received: () => received, ended: () => ended };
}

/** The descriptors the server process holds open, from /proc. */
const descriptors = (server: ServerProcess) => readdirSync(`/proc/${server.child.pid}/fd`).length;

async function eventually(done: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`not within ${limitMs} ms: ${what}`);
    await sleep(50);
  }
}

async function healthz(server: ServerProcess): Promise<number> {
  const answer = await fetch(`${server.address}/healthz`, { signal: AbortSignal.timeout(5000) });
  await answer.arrayBuffer();
  return answer.status;
}

test('MAX_CONNECTIONS is configurable, at least 1; its default is half the open-descriptor limit, at most 4096', () => {
  assert.equal(loadConfig({ MAX_CONNECTIONS: '25' }).maxConnections, 25);
  assert.throws(() => loadConfig({ MAX_CONNECTIONS: '0' }), /MAX_CONNECTIONS/);
  assert.throws(() => loadConfig({ MAX_CONNECTIONS: 'many' }), /MAX_CONNECTIONS/);
  const byDefault = loadConfig({}).maxConnections;
  assert.ok(byDefault >= 1 && byDefault <= 4096, String(byDefault));
});

for (const dialect of dialects) {
  describe(`idle connections cannot exhaust or crash the service [${dialect}]`, () => {
    const databases: TestDatabase[] = [];
    const servers: ServerProcess[] = [];
    const clients: Idle[] = [];

    async function start(env: Record<string, string>, openFiles?: number) {
      const database = await createTestDatabase(dialect);
      databases.push(database);
      const server = await startServer(
        { ...databaseEnv(database), HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000', ...env },
        [],
        { openFiles },
      );
      servers.push(server);
      return server;
    }

    async function idle(server: ServerProcess, count: number, text?: string) {
      const opened: Idle[] = [];
      for (let i = 0; i < count; i++) opened.push(await openIdle(server.address, text));
      clients.push(...opened);
      return opened;
    }

    after(async () => {
      for (const client of clients) client.socket.destroy();
      for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
      for (const database of databases) await database.drop();
    });

    test('a connection that timed out is destroyed after its 408, though the client never closes its half', async () => {
      const server = await start({});
      const before = descriptors(server);
      const stalled = await idle(server, 30, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await eventually(() => stalled.every((client) => client.ended()), 'every client got its 408 and FIN');
      for (const client of stalled) assert.match(client.received(), /^HTTP\/1\.1 408 /);
      await eventually(() => descriptors(server) <= before + 2, 'the server let go of every socket', 5000);
      assert.equal(server.child.exitCode, null);
    });

    test('connections past MAX_CONNECTIONS are refused at once; /healthz answers once the held ones are gone', async () => {
      // Held for 3 s unless refused.
      const server = await start({
        MAX_CONNECTIONS: '20',
        HEADERS_TIMEOUT_MS: '3000',
        REQUEST_TIMEOUT_MS: '3000',
      });
      const before = descriptors(server);
      const opened = await idle(server, 50);
      await sleep(1000);
      const closed = opened.filter((client) => client.ended()).length;
      assert.ok(closed >= 30, `the 30 past the cap were closed at once (${closed} were)`);
      await eventually(() => opened.every((client) => client.ended()), 'the held 20 timed out');
      await eventually(() => descriptors(server) <= before + 2, 'the server let go of every socket', 5000);
      assert.equal(await healthz(server), 200);
      assert.equal(server.child.exitCode, null);
    });

    test('out of descriptors, the service refuses connections but never exits, and answers once they are gone', async () => {
      // A cap above what the descriptor limit allows, and the idle collector looking every 50 ms.
      const server = await start({ MAX_CONNECTIONS: '1000', IDLE_COLLECT_MS: '50' }, 128);
      const opened = await idle(server, 200);
      await sleep(1000);
      assert.equal(server.child.exitCode, null, server.stderr());
      await eventually(() => opened.every((client) => client.ended()), 'every idle connection was closed');
      for (const client of opened) client.socket.destroy();
      await eventually(() => descriptors(server) < 100, 'the descriptors were given back');
      assert.equal(await healthz(server), 200);
      await sleep(500);
      assert.equal(server.child.exitCode, null, server.stderr());
    });
  });
}
