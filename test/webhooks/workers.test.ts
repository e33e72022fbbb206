import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';
import { callServer, type Json, startReceiver, until } from './support.ts';

const writes = 20;

// Under `cpq serve --workers 2` each worker process runs its own delivery worker; the claims in the database keep
// them from sending one delivery twice while its lease holds.
describeEachDatabase('webhooks under cpq serve --workers 2', (ctx) => {
  let server: ServerProcess | undefined;
  after(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await server?.exited;
  });

  test('every event is delivered once, and SIGTERM stops the workers and their deliveries', async () => {
    const receiver = await startReceiver();
    const env = { ...databaseEnv(ctx.database), RATE_LIMIT_PER_SECOND: '0', WEBHOOKS_ALLOW_PRIVATE: 'true' };
    const call = (method: string, path: string, body?: unknown) =>
      callServer(server as ServerProcess, ctx.key, method, path, body);
    try {
      server = await startServer(env, ['--workers', '2']);
      const endpoint = await call('POST', '/v1/webhook-endpoints', {
        url: receiver.url,
        eventTypes: ['bundle.created'],
      });
      const made: string[] = [];
      for (let i = 0; i < writes; i++) {
        made.push(
          (await call('POST', '/v1/bundles', { header: { productId: `W-${i}`, properties: {} } })).id,
        );
      }
      await until(async () => {
        const { deliveries } = await call('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`);
        return deliveries.length === writes && deliveries.every((d: Json) => d.status === 'delivered');
      }, 30_000);
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      assert.equal(new Set(ids).size, ids.length, 'no event sent twice');
      assert.deepEqual(
        receiver.received.map((r) => r.event.data.object.id).sort(),
        [...made].sort(),
        'every event arrived',
      );

      server.child.kill('SIGTERM');
      assert.deepEqual(await server.exited, { code: 0, signal: null }, server.stderr());
      assert.equal(server.logs().filter((line) => line.msg === 'stopped').length, 3);
    } finally {
      await receiver.close();
    }
  });
});
