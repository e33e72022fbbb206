import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { pendingDeliveries, sealStoredSecrets } from '../../src/webhooks/webhooks.service.ts';
import {
  DISABLE_AFTER_MS,
  GIVE_UP_AFTER_MS,
  RETRY_DELAYS_MS,
  retryDelay,
} from '../../src/webhooks/webhooks.worker.ts';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import {
  deliveriesOf,
  drain,
  fakeClock,
  type Json,
  ok,
  privateApp,
  startReceiver,
  testWorker,
  until,
  write,
} from './support.ts';

const HOUR = 3_600_000;

describeEachDatabase('webhook delivery', (ctx) => {
  let hooks: Awaited<ReturnType<typeof privateApp>>;
  before(async () => {
    hooks = await privateApp(ctx);
  });
  after(async () => {
    await hooks?.close();
  });

  async function endpointFor(key: string, url: string, eventTypes: string[] = ['*']): Promise<Json> {
    return ok(await hooks.call('POST', '/v1/webhook-endpoints', { key, body: { url, eventTypes } }), 201);
  }

  const endpointOf = async (key: string, id: string) =>
    ok(await ctx.call('GET', `/v1/webhook-endpoints/${id}`, { key }), 200);

  test('a receiver failing 3 times then answering: retried after 5 s, 5 min and 30 min, then delivered', async () => {
    const key = await ctx.newKey('hooks-retries');
    const receiver = await startReceiver((n) => (n < 3 ? 500 : 204));
    const clock = fakeClock();
    const worker = testWorker(ctx.db, { clock: clock.now });
    try {
      const endpoint = await endpointFor(key, receiver.url);
      await write(ctx, 'RETRIED', key);
      assert.equal(await worker.runOnce(), 1);
      let [delivery] = await deliveriesOf(ctx, endpoint.id, key);
      assert.equal(delivery.status, 'pending');
      assert.equal((await endpointOf(key, endpoint.id)).failingSince, new Date(clock.now()).toISOString());
      for (const delay of RETRY_DELAYS_MS.slice(0, 3)) {
        const due = Date.parse(delivery.nextAttemptAt);
        assert.equal(due, clock.now() + delay, 'the wait follows the schedule (jitter fixed at none)');
        clock.set(due - 1);
        assert.equal(await worker.runOnce(), 0, 'nothing is attempted before it is due');
        clock.set(due);
        assert.equal(await worker.runOnce(), 1);
        [delivery] = await deliveriesOf(ctx, endpoint.id, key);
      }
      assert.equal(delivery.status, 'delivered');
      assert.equal(delivery.nextAttemptAt, null);
      assert.equal(delivery.attemptCount, 4);
      assert.deepEqual(
        delivery.attempts.map((a: Json) => [a.responseStatus, a.error]),
        [
          [500, 'answered HTTP 500'],
          [500, 'answered HTTP 500'],
          [500, 'answered HTTP 500'],
          [204, null],
        ],
      );
      assert.equal(receiver.received.length, 4);
      assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
      assert.equal((await endpointOf(key, endpoint.id)).failingSince, null);
    } finally {
      await receiver.close();
    }
  });

  test('the backoff is jittered within 20% either side', async () => {
    for (let n = 1; n <= 9; n++) {
      const base = RETRY_DELAYS_MS[Math.min(n, RETRY_DELAYS_MS.length) - 1] as number;
      assert.equal(
        retryDelay(n, () => 0),
        Math.round(base * 0.8),
      );
      const most = retryDelay(n, () => 0.999999);
      assert.ok(most > base * 1.19 && most <= base * 1.2, `${most}`);
    }
  });

  test('after 3 days a delivery fails; a manual retry then makes one more attempt', async () => {
    const key = await ctx.newKey('hooks-give-up');
    let answer = 500;
    const receiver = await startReceiver(() => answer);
    const clock = fakeClock();
    const start = clock.now();
    const worker = testWorker(ctx.db, { clock: clock.now });
    try {
      const endpoint = await endpointFor(key, receiver.url);
      await write(ctx, 'GIVEN-UP', key);
      await worker.runOnce();
      for (;;) {
        const [delivery] = await deliveriesOf(ctx, endpoint.id, key);
        if (delivery.status !== 'pending') break;
        clock.set(Date.parse(delivery.nextAttemptAt));
        assert.equal(await worker.runOnce(), 1);
      }
      const [failed] = await deliveriesOf(ctx, endpoint.id, key);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.nextAttemptAt, null);
      // 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 10 h while within 3 days: 12 attempts.
      assert.equal(failed.attemptCount, 12);
      const lastAt = Date.parse(failed.attempts.at(-1).at);
      assert.ok(lastAt <= start + GIVE_UP_AFTER_MS && lastAt > start + GIVE_UP_AFTER_MS - 10 * HOUR);

      answer = 200;
      const retried = ok(
        await ctx.call('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${failed.eventId}/retry`, {
          key,
        }),
        202,
      );
      assert.equal(retried.status, 'pending');
      assert.equal(await worker.runOnce(), 1);
      const [delivered] = await deliveriesOf(ctx, endpoint.id, key);
      assert.deepEqual([delivered.status, delivered.attemptCount], ['delivered', 13]);
    } finally {
      await receiver.close();
    }
  });

  test('an endpoint failing for 5 days is disabled, records webhook_endpoint.disabled, and is sent nothing more', async () => {
    const key = await ctx.newKey('hooks-disable');
    const dead = await startReceiver(() => 503);
    const watcher = await startReceiver();
    const clock = fakeClock();
    const worker = testWorker(ctx.db, { clock: clock.now });
    try {
      const endpoint = await endpointFor(key, dead.url);
      const watching = await endpointFor(key, watcher.url, ['webhook_endpoint.disabled']);
      await write(ctx, 'DOOMED-1', key);
      await drain(worker);
      clock.advance(DISABLE_AFTER_MS - HOUR);
      await write(ctx, 'DOOMED-2', key);
      await drain(worker);
      assert.equal((await endpointOf(key, endpoint.id)).isEnabled, true, 'not yet 5 days');
      clock.advance(HOUR);
      await write(ctx, 'DOOMED-3', key);
      await drain(worker);
      const disabled = await endpointOf(key, endpoint.id);
      assert.deepEqual([disabled.isEnabled, disabled.disabledReason], [false, 'failing']);
      const events = ok(
        await ctx.call('GET', '/v1/events', { key, query: { types: 'webhook_endpoint.disabled' } }),
        200,
      ).events;
      assert.equal(events.length, 1);
      assert.deepEqual(events[0].data.object, disabled);
      assert.equal(events[0].requestId, null);
      assert.deepEqual(
        watcher.received.map((r) => r.event.id),
        [events[0].id],
        'the event reaches an endpoint subscribed to it',
      );
      assert.equal((await deliveriesOf(ctx, watching.id, key))[0].status, 'delivered');

      const sent = dead.received.length;
      const made = (await deliveriesOf(ctx, endpoint.id, key)).length;
      await write(ctx, 'AFTER-DISABLE', key);
      clock.advance(HOUR);
      await drain(worker);
      assert.equal(dead.received.length, sent, 'a disabled endpoint is sent nothing');
      assert.equal(
        (await deliveriesOf(ctx, endpoint.id, key)).length,
        made,
        'nor are events fanned out to it',
      );
    } finally {
      await dead.close();
      await watcher.close();
    }
  });

  test('a hung receiver holds only its endpoint’s places: others are delivered and the API answers meanwhile', async () => {
    const key = await ctx.newKey('hooks-hung');
    const hung = await startReceiver(() => 'hang');
    const fast = await startReceiver();
    const worker = testWorker(ctx.db, { concurrency: 4, endpointConcurrency: 2, timeoutMs: 30_000 });
    let slowId = '';
    try {
      slowId = (await endpointFor(key, hung.url)).id;
      await endpointFor(key, fast.url);
      for (let i = 0; i < 10; i++) await write(ctx, `HUNG-${i}`, key);
      worker.start();
      await fast.waitFor(10);
      await hung.waitFor(2);
      const started = performance.now();
      assert.equal((await ctx.call('GET', '/v1/bundles', { key })).status, 200);
      assert.ok(performance.now() - started < 1000);
      assert.equal(hung.received.length, 2, 'at most endpointConcurrency attempts to one endpoint');
      // The receiver has the last request before the worker has recorded its answer.
      await until(async () => (await pendingDeliveries(ctx.db)) === 10);
    } finally {
      // Shutdown cuts the two hung attempts and gives their deliveries back untried.
      await worker.stop(0);
      await hung.close();
      await fast.close();
    }
    const left = await deliveriesOf(ctx, slowId, key);
    assert.equal(left.length, 10);
    assert.ok(left.every((d: Json) => d.status === 'pending' && d.attemptCount === 0));
    const leased = await ctx.db
      .selectFrom('webhook_deliveries')
      .select('event_id')
      .where('account_id', '=', 'hooks-hung')
      .where('lease_token', 'is not', null)
      .execute();
    assert.deepEqual(leased, [], 'released, not left to a lease');
  });

  test('with WEBHOOKS_SECRET_KEY secrets are sealed at rest (AES-256-GCM) and still sign; without it, sealed at the next start', async () => {
    const key = await ctx.newKey('hooks-sealed');
    const receiver = await startReceiver();
    const secretKey = randomBytes(32);
    try {
      const plain = await endpointFor(key, receiver.url);
      const stored = await ctx.db
        .selectFrom('webhook_endpoints')
        .select('secret')
        .where('account_id', '=', 'hooks-sealed')
        .executeTakeFirstOrThrow();
      assert.equal(stored.secret, `plain.${plain.secret}`);

      const sealedApp = await hooksWithKey(secretKey);
      let sealed: Json;
      try {
        sealed = ok(
          await sealedApp.call('POST', '/v1/webhook-endpoints', {
            key,
            body: { url: receiver.url, eventTypes: ['*'] },
          }),
          201,
        );
      } finally {
        await sealedApp.close();
      }
      // Every account's: the other tests' endpoints too.
      assert.ok((await sealStoredSecrets(ctx.db, { secretKey, allowPrivate: true })) >= 1);
      const rows = await ctx.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'secret'])
        .where('account_id', '=', 'hooks-sealed')
        .execute();
      for (const row of rows) {
        assert.match(row.secret, /^v1\.[\w-]{16}\.[\w-]+$/);
        for (const secret of [plain.secret, sealed.secret]) {
          assert.ok(!row.secret.includes(secret.slice('whsec_'.length, 20)));
        }
      }
      await write(ctx, 'SEALED', key);
      await drain(testWorker(ctx.db, { secretKey }));
      assert.equal(receiver.received.length, 2);
      for (const { secret } of [plain, sealed]) {
        assert.ok(
          receiver.received.some((r) => {
            try {
              return Boolean(new Webhook(secret).verify(r.body, r.headers as Record<string, string>));
            } catch {
              return false;
            }
          }),
        );
      }

      // Without the key (or with another), a sealed secret cannot sign: the attempt fails and says why.
      await write(ctx, 'NO-KEY', key);
      await drain(testWorker(ctx.db, { secretKey: randomBytes(32) }));
      const [latest] = await deliveriesOf(ctx, sealed.id, key);
      assert.equal(latest.status, 'pending');
      assert.match(latest.attempts[0].error, /WEBHOOKS_SECRET_KEY/);
      assert.equal(receiver.received.length, 2);
    } finally {
      await receiver.close();
    }
  });

  async function hooksWithKey(secretKey: Buffer) {
    return otherInstance(ctx, {
      webhooksAllowPrivate: true,
      webhooksSecretKey: secretKey.toString('base64'),
    });
  }

  test('destinations are checked on the resolved addresses at each attempt, and the connection goes to the one checked', async () => {
    const key = await ctx.newKey('hooks-dns');
    const receiver = await startReceiver();
    try {
      // A name the test's resolver answers for, standing in for DNS.
      const named = await endpointFor(key, `http://receiver.test:${receiver.port}/hook`);
      await write(ctx, 'PINNED', key);
      const resolve = async (host: string) => {
        assert.equal(host, 'receiver.test');
        return [{ address: '127.0.0.1', family: 4 }];
      };
      await drain(testWorker(ctx.db, { resolve }));
      assert.equal(receiver.received.length, 1);
      assert.equal(receiver.received[0]?.headers.host, `receiver.test:${receiver.port}`);

      // The same name without WEBHOOKS_ALLOW_PRIVATE: refused on the http scheme before any lookup.
      const strict = (resolved: { address: string; family: number }[]) =>
        testWorker(ctx.db, {
          settings: { secretKey: null, allowPrivate: false },
          resolve: async () => resolved,
        });
      await write(ctx, 'STRICT-HTTP', key);
      await drain(strict([{ address: '127.0.0.1', family: 4 }]));
      let [delivery] = await deliveriesOf(ctx, named.id, key);
      assert.equal(delivery.attempts[0].error, 'destination not allowed: the URL must be an https URL');

      // An https name that resolves to a loopback or private address among public ones: refused, nothing sent.
      await ctx.db
        .updateTable('webhook_endpoints')
        .set({ url: `https://rebinding.test:${receiver.port}/hook` })
        .where('account_id', '=', 'hooks-dns')
        .execute();
      for (const resolved of [
        [{ address: '127.0.0.1', family: 4 }],
        [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ],
        [{ address: '::ffff:169.254.169.254', family: 6 }],
      ]) {
        await write(ctx, `REBIND-${resolved.length}`, key);
        await drain(strict(resolved));
        [delivery] = await deliveriesOf(ctx, named.id, key);
        const last = resolved.find((r) => r.address !== '93.184.216.34')?.address;
        assert.equal(
          delivery.attempts[0].error,
          `destination not allowed: rebinding.test resolves to ${last}, a loopback, private or link-local address`,
        );
      }
      assert.equal(receiver.received.length, 1, 'nothing reached the receiver after the first');
    } finally {
      await receiver.close();
    }
  });
});
