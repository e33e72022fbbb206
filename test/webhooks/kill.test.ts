import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';
import { callServer, type Json, startReceiver, until } from './support.ts';

const writes = 12;
const timeoutMs = 3000;

// A real `cpq serve` killed with SIGKILL while its attempts are in flight, then started again: every delivery is
// completed, the ones cut off once their lease (timeout + 5 s) has lapsed.
describeEachDatabase('webhooks across a kill -9 of the service', (ctx) => {
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
  });

  test('a delivery in flight at the kill is sent again after the restart; none is lost', async () => {
    let hanging = true;
    const receiver = await startReceiver(() => (hanging ? 'hang' : 200));
    const env = {
      ...databaseEnv(ctx.database),
      RATE_LIMIT_PER_SECOND: '0',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_TIMEOUT_MS: String(timeoutMs),
      WEBHOOKS_ENDPOINT_CONCURRENCY: '3',
    };
    const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      callServer(server, ctx.key, method, path, body);
    try {
      const first = await startServer(env);
      servers.push(first);
      const endpoint = await call(first, 'POST', '/v1/webhook-endpoints', {
        url: receiver.url,
        eventTypes: ['bundle.created'],
      });
      // At once, so the kill comes well within the attempts' timeout.
      const made: string[] = await Promise.all(
        Array.from({ length: writes }, async (_, i) => {
          const body = { header: { productId: `K-${i}`, properties: {} } };
          return (await call(first, 'POST', '/v1/bundles', body)).id;
        }),
      );
      await receiver.waitFor(3);
      first.child.kill('SIGKILL');
      assert.equal((await first.exited).signal, 'SIGKILL');
      const cutOff = receiver.received.map((r) => r.headers['webhook-id']);
      assert.equal(cutOff.length, 3, 'the endpoint’s three places were in flight');

      hanging = false;
      const killedAt = Date.now();
      const second = await startServer(env);
      servers.push(second);
      const deliveries = async () =>
        (await call(second, 'GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`))
          .deliveries as Json[];
      await until(async () => {
        const all = await deliveries();
        return all.length === writes && all.every((d) => d.status === 'delivered');
      }, 60_000);
      const byObject = new Set(receiver.received.map((r) => r.event.data.object.id));
      assert.deepEqual([...byObject].sort(), [...made].sort(), 'every event arrived');
      for (const id of cutOff) {
        const again = receiver.received.filter((r) => r.headers['webhook-id'] === id);
        assert.equal(again.length, 2, `${id}: cut off, then sent again`);
      }
      assert.ok(Date.now() - killedAt >= timeoutMs + 5000 - 1000, 'the cut-off ones waited for their lease');
      second.child.kill('SIGTERM');
      assert.equal((await second.exited).code, 0);
    } finally {
      await receiver.close();
    }
  });
});
