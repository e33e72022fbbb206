import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as connectTcp } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/keys/keys.service.ts';
import { createTestDatabase, databaseEnv, dialects, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from './server-process.ts';

for (const dialect of dialects) {
  describe(`graceful shutdown of a running server [${dialect}]`, () => {
    let database: TestDatabase;
    let key = '';
    let server: ServerProcess;

    before(async () => {
      database = await createTestDatabase(dialect);
      key = (await createKey(database.handle.db, { accountId: 'acme', name: null, readOnly: false }))
        .plaintext;
      server = await startServer(databaseEnv(database));
    });

    after(async () => {
      if (server?.child.exitCode === null) server.child.kill('SIGKILL');
      await database?.drop();
    });

    test('SIGTERM lets a request in flight finish, refuses new connections, then exits 0', async () => {
      const before = await fetch(`${server.address}/v1/bundles`, { headers: { 'x-api-key': key } });
      assert.equal(before.status, 200);

      // A request whose body is half sent is in flight: the server has begun it and must wait for the rest.
      const body = JSON.stringify({
        header: { productId: 'in-flight', properties: { note: 'x'.repeat(2000) } },
      });
      const { port } = new URL(server.address);
      const socket = connectTcp(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      let response = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        response += chunk;
      });
      const ended = once(socket, 'end');
      socket.write(
        [
          'POST /v1/bundles HTTP/1.1',
          'Host: 127.0.0.1',
          `x-api-key: ${key}`,
          'x-request-id: in-flight-1',
          'content-type: application/json',
          `content-length: ${Buffer.byteLength(body)}`,
          '',
          body.slice(0, 1000),
        ].join('\r\n'),
      );
      await server.waitForLog((line) => line.requestId === 'in-flight-1' && line.msg === 'incoming request');

      server.child.kill('SIGTERM');
      await server.waitForLog((line) => line.msg === 'shutting down: finishing requests in flight');

      // The listening socket closes at once: a new connection is refused while the old request is still open.
      let refused: unknown;
      for (let attempt = 0; attempt < 100 && refused === undefined; attempt++) {
        refused = await fetch(`${server.address}/healthz`).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (refused === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((refused as { cause?: { code?: string } })?.cause?.code, 'ECONNREFUSED');
      assert.equal(server.child.exitCode, null, 'the process waits for the request in flight');

      // Written, not ended: a half-closed socket would abort the request by Node's rules, shutdown or not.
      socket.write(body.slice(1000));
      await ended;
      const [head = '', payload = ''] = response.split('\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 201 /, response);
      assert.match(head, /\r\nconnection: close\r\n/i);
      assert.match(head, /\r\nx-request-id: in-flight-1\r\n/i);
      assert.equal(JSON.parse(payload).header.productId, 'in-flight');

      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
      assert.ok(server.logs().some((line) => line.msg === 'stopped'));
    });

    test('the logs are JSON lines carrying the request id, and never the API key', () => {
      const requests = server.logs().filter((line) => line.msg === 'incoming request');
      assert.ok(requests.length >= 2);
      for (const line of requests) assert.equal(typeof line.requestId, 'string');
      assert.ok(
        server.logs().some((line) => line.requestId === 'in-flight-1' && line.msg === 'request completed'),
      );
      assert.ok(!server.stdout().includes(key), 'the key is not in the logs');
      assert.ok(!server.stderr().includes(key), 'the key is not on stderr');
    });
  });
}
