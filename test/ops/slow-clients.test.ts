import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/database.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { createTestDatabase, databaseEnv, dialects, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from './server-process.ts';

interface Client {
  socket: Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves when the server closes the connection. */
  closed: Promise<unknown>;
}

async function openClient(address: string): Promise<Client> {
  const { port } = new URL(address);
  const socket = connectTcp(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  // A cut connection may be reset rather than ended; either way it is closed.
  socket.on('error', () => {});
  return { socket, received: () => received, closed: once(socket, 'close') };
}

/**
 * Writes `text` a byte at a time, every `everyMs`, then keeps sending spaces, until the server closes the
 * connection; fails if that takes over `limitMs`. Answers how many bytes were sent.
 */
async function drip(client: Client, text: string, everyMs: number, limitMs: number): Promise<number> {
  let sent = 0;
  let open = true;
  void client.closed.then(() => {
    open = false;
  });
  const deadline = Date.now() + limitMs;
  while (open) {
    assert.ok(Date.now() < deadline, `the server kept a dripping client for over ${limitMs} ms`);
    if (!client.socket.destroyed) client.socket.write(text[sent] ?? ' ');
    sent++;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return sent;
}

function assertTimeoutProblem(response: string): void {
  const [head = '', payload = ''] = response.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 408 /, response);
  assert.match(head, /\r\ncontent-type: application\/problem\+json\r\n/i);
  assert.match(head, /\r\nx-request-id: \S+\r\n/i);
  assert.equal(JSON.parse(payload).code, 'request_timeout');
}

test('the timeouts are configurable and the header timeout may not exceed the request timeout', () => {
  const config = loadConfig({
    HEADERS_TIMEOUT_MS: '100',
    REQUEST_TIMEOUT_MS: '200',
    KEEP_ALIVE_TIMEOUT_MS: '300',
    SHUTDOWN_GRACE_MS: '0',
  });
  assert.deepEqual(
    [config.headersTimeoutMs, config.requestTimeoutMs, config.keepAliveTimeoutMs, config.shutdownGraceMs],
    [100, 200, 300, 0],
  );
  assert.throws(
    () => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }),
    /HEADERS_TIMEOUT_MS/,
  );
  assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '0' }), /KEEP_ALIVE_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ SHUTDOWN_GRACE_MS: 'soon' }), /SHUTDOWN_GRACE_MS/);
});

/** A service process on a fresh database of `dialect`, started with `env`, for the suite that calls this. */
function serviceForSuite(dialect: Dialect, env: Record<string, string>) {
  const service = {} as { database: TestDatabase; key: string; server: ServerProcess };
  before(async () => {
    service.database = await createTestDatabase(dialect);
    service.key = (
      await createKey(service.database.handle.db, { accountId: 'acme', name: null, readOnly: false })
    ).plaintext;
    service.server = await startServer({ ...databaseEnv(service.database), ...env });
  });
  after(async () => {
    if (service.server?.child.exitCode === null) service.server.child.kill('SIGKILL');
    await service.database?.drop();
  });
  return service;
}

for (const dialect of dialects) {
  describe(`slow clients are cut off [${dialect}]`, () => {
    const service = serviceForSuite(dialect, {
      HEADERS_TIMEOUT_MS: '1000',
      REQUEST_TIMEOUT_MS: '2000',
      KEEP_ALIVE_TIMEOUT_MS: '500',
    });

    test('headers dripped a byte at a time get 408 and the connection closed, no key needed', async () => {
      const client = await openClient(service.server.address);
      const sent = await drip(client, 'GET /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ', 100, 10_000);
      assert.ok(sent > 5, 'the client was still sending');
      assertTimeoutProblem(client.received());
    });

    test('a body dripped a byte at a time gets 408 and the connection closed', async () => {
      const client = await openClient(service.server.address);
      client.socket.write(
        [
          'POST /v1/bundles HTTP/1.1',
          'Host: 127.0.0.1',
          `x-api-key: ${service.key}`,
          'content-type: application/json',
          'content-length: 10000',
          '',
          '',
        ].join('\r\n'),
      );
      await drip(client, '{"header":{"productId":"slow","properties":{"note":"', 100, 10_000);
      assertTimeoutProblem(client.received());
      const listed = await fetch(`${service.server.address}/v1/bundles`, {
        headers: { 'x-api-key': service.key },
      });
      assert.deepEqual(
        ((await listed.json()) as { bundles: unknown[] }).bundles,
        [],
        'nothing of the cut request was stored',
      );
    });

    test('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
      const client = await openClient(service.server.address);
      client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const limit = setTimeout(() => client.socket.destroy(new Error('kept open')), 10_000);
      await client.closed;
      clearTimeout(limit);
      assert.match(client.received(), /^HTTP\/1\.1 200 /);
    });
  });

  describe(`shutdown with stalled and idle clients [${dialect}]`, () => {
    // Timeouts far beyond the grace period: only shutdown can close these connections in time.
    const service = serviceForSuite(dialect, {
      REQUEST_TIMEOUT_MS: '120000',
      KEEP_ALIVE_TIMEOUT_MS: '120000',
      SHUTDOWN_GRACE_MS: '500',
    });

    test('SIGTERM closes a stalled request and an idle connection after the grace period and exits 0', async () => {
      const idle = await openClient(service.server.address);
      idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      while (!idle.received().includes('"ok"')) await new Promise((resolve) => setTimeout(resolve, 10));

      const stalled = await openClient(service.server.address);
      stalled.socket.write(
        [
          'POST /v1/bundles HTTP/1.1',
          'Host: 127.0.0.1',
          `x-api-key: ${service.key}`,
          'x-request-id: stalled-1',
          'content-type: application/json',
          'content-length: 1000',
          '',
          '{"header":',
        ].join('\r\n'),
      );
      await service.server.waitForLog(
        (line) => line.requestId === 'stalled-1' && line.msg === 'incoming request',
      );

      service.server.child.kill('SIGTERM');
      const limit = setTimeout(() => service.server.child.kill('SIGKILL'), 10_000);
      const exit = await service.server.exited;
      clearTimeout(limit);
      assert.deepEqual(exit, { code: 0, signal: null }, service.server.stderr());
      await idle.closed;
      await stalled.closed;
      assert.equal(stalled.received(), '', 'the stalled request got no answer: it was cut');
      const messages = service.server.logs().map((line) => line.msg);
      assert.ok(messages.includes('shutdown grace period over: closing every connection'));
      assert.ok(messages.includes('stopped'));
    });
  });

  describe(`shutdown with connections that carry no request [${dialect}]`, () => {
    const service = serviceForSuite(dialect, {
      KEEP_ALIVE_TIMEOUT_MS: '120000',
      SHUTDOWN_GRACE_MS: '60000',
    });

    test('SIGTERM closes a connection that never sent a request and an idle one at once, not after the grace period', async () => {
      // As a browser preconnects: a connection opened and left without a request.
      const preconnected = await openClient(service.server.address);
      const idle = await openClient(service.server.address);
      idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      while (!idle.received().includes('"ok"')) await new Promise((resolve) => setTimeout(resolve, 10));

      const signalled = performance.now();
      service.server.child.kill('SIGTERM');
      const limit = setTimeout(() => service.server.child.kill('SIGKILL'), 20_000);
      const exit = await service.server.exited;
      clearTimeout(limit);
      const ms = performance.now() - signalled;
      assert.deepEqual(exit, { code: 0, signal: null }, service.server.stderr());
      await preconnected.closed;
      await idle.closed;
      assert.equal(preconnected.received(), '');
      assert.ok(ms < 5_000, `stopped ${Math.round(ms)} ms after SIGTERM, with a grace period of 60 s`);
      assert.ok(
        !service.server
          .logs()
          .some((line) => line.msg === 'shutdown grace period over: closing every connection'),
      );
    });
  });
}
