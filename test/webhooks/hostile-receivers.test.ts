import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';
import { callServer, hostileReceiver, ok, startReceiver, testWorker, until, write } from './support.ts';

describeEachDatabase('hostile webhook receivers and shutdown', (ctx) => {
  let server: ServerProcess | undefined;
  after(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await server?.exited;
  });

  test('SIGTERM while receivers send endless and drip-fed answers: the process exits within SHUTDOWN_GRACE_MS', async () => {
    const endless = await hostileReceiver('endless');
    const drip = await hostileReceiver('drip');
    try {
      server = await startServer({
        ...databaseEnv(ctx.database),
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        // Only shutdown can cut these attempts short.
        WEBHOOKS_TIMEOUT_MS: '60000',
        SHUTDOWN_GRACE_MS: '500',
      });
      const call = (method: string, path: string, body?: unknown) =>
        callServer(server as ServerProcess, ctx.key, method, path, body);
      for (const receiver of [endless, drip]) {
        await call('POST', '/v1/webhook-endpoints', { url: receiver.url, eventTypes: ['bundle.created'] });
      }
      await call('POST', '/v1/bundles', { header: { productId: 'HOSTILE', properties: {} } });
      await until(async () => endless.requests() > 0 && drip.requests() > 0, 10_000);
      await sleep(300);
      const stopping = performance.now();
      server.child.kill('SIGTERM');
      const limit = setTimeout(() => server?.child.kill('SIGKILL'), 10_000);
      const exit = await server.exited;
      clearTimeout(limit);
      const took = performance.now() - stopping;
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
      assert.ok(took < 3000, `stopped in ${Math.round(took)} ms`);
    } finally {
      await endless.close();
      await drip.close();
    }
  });
});

describeEachDatabase('webhook places are shared by account', (ctx) => {
  test('an account whose endpoints never answer leaves another account’s deliveries p50 under 2 s', async () => {
    const hooks = await otherInstance(ctx, { webhooksAllowPrivate: true });
    const [hungKey, fastKey] = [await ctx.newKey('fair-hung'), await ctx.newKey('fair-fast')];
    const arrived = new Map<string, number>();
    const hung = await startReceiver(() => 'hang');
    const fast = await startReceiver((_, request) => {
      arrived.set(request.event.data.object.id, performance.now());
      return 200;
    });
    // Eight places, four to an endpoint: the hung account's six endpoints could take every place for 10 s.
    const worker = testWorker(ctx.db, { concurrency: 8, endpointConcurrency: 4, timeoutMs: 10_000 });
    try {
      for (let i = 0; i < 6; i++) {
        const body = { url: `${hung.url}?n=${i}`, eventTypes: ['*'] };
        ok(await hooks.call('POST', '/v1/webhook-endpoints', { key: hungKey, body }), 201);
      }
      const body = { url: fast.url, eventTypes: ['bundle.created'] };
      ok(await hooks.call('POST', '/v1/webhook-endpoints', { key: fastKey, body }), 201);
      for (let i = 0; i < 3; i++) await write(ctx, `HUNG-${i}`, hungKey);
      worker.start();
      await hung.waitFor(6);
      await sleep(200);
      const written = new Map<string, number>();
      for (let i = 0; i < 10; i++)
        written.set((await write(ctx, `FAST-${i}`, fastKey)).id, performance.now());
      await fast.waitFor(10, 15_000);
      const waits = [...written].map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at);
      waits.sort((a, b) => a - b);
      const p50 = waits[Math.floor(waits.length / 2)] as number;
      assert.ok(p50 < 2000, `p50 ${Math.round(p50)} ms (${waits.map(Math.round).join(', ')})`);
    } finally {
      await worker.stop(0);
      await hung.close();
      await fast.close();
      await hooks.close();
    }
  });
});
