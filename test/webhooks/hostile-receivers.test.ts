import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { send } from '../../src/webhooks/sender.ts';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';
import { callServer, ok, startReceiver, testWorker, write } from './support.ts';

/**
 * A receiver on 127.0.0.1 that answers 200 at once, then sends a body that never ends: as fast as the sender reads
 * it ('endless'), or a byte every 50 ms ('drip'). It counts what it wrote and notes when the sender let go.
 */
async function hostileReceiver(kind: 'endless' | 'drip') {
  let requests = 0;
  let written = 0;
  let open = 0;
  const server = http.createServer((request, response) => {
    requests++;
    open++;
    request.resume();
    response.on('close', () => {
      open--;
    });
    response.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(kind === 'endless' ? 64 * 1024 : 1, 'x');
    const more = () => {
      while (!response.destroyed) {
        written += chunk.length;
        if (kind === 'drip') {
          response.write(chunk);
          setTimeout(more, 50);
          return;
        }
        if (!response.write(chunk)) {
          response.once('drain', more);
          return;
        }
      }
    };
    more();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests: () => requests,
    written: () => written,
    open: () => open,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function eventually(done: () => boolean, what: string, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`not within ${limitMs} ms: ${what}`);
    await sleep(10);
  }
}

const attempt = (url: string, timeoutMs: number) =>
  send({
    url,
    body: JSON.stringify({ type: 'test' }),
    headers: { 'content-type': 'application/json' },
    timeoutMs,
    allowPrivate: true,
  });

test('an endless answer: the attempt reads at most 64 KB of it, then lets the connection go', async () => {
  const receiver = await hostileReceiver('endless');
  try {
    const started = performance.now();
    const outcome = await attempt(receiver.url, 2000);
    assert.ok(performance.now() - started < 2000, 'within the attempt’s time');
    assert.equal(outcome.responseStatus, 200);
    assert.equal(outcome.error, null, 'the status decides the outcome');
    await eventually(() => receiver.open() === 0, 'the receiver’s connection closed', 1000);
    const written = receiver.written();
    // What the receiver wrote beyond what was read sits in the sockets' buffers: a few megabytes at most.
    await sleep(500);
    assert.equal(receiver.written(), written, 'nothing more was taken');
    assert.ok(written < 16 * 2 ** 20, `${written} bytes written`);
  } finally {
    await receiver.close();
  }
});

test('a drip-fed answer: the attempt, body included, ends within its time and lets the connection go', async () => {
  const receiver = await hostileReceiver('drip');
  try {
    const started = performance.now();
    const outcome = await attempt(receiver.url, 1000);
    const took = performance.now() - started;
    assert.equal(outcome.responseStatus, 200);
    assert.ok(took >= 900 && took < 1500, `the body was read for the attempt's time, no longer: ${took} ms`);
    await eventually(() => receiver.open() === 0, 'the receiver’s connection closed', 500);
  } finally {
    await receiver.close();
  }
});

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
      await eventually(() => endless.requests() > 0 && drip.requests() > 0, 'both receivers reached', 10_000);
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
