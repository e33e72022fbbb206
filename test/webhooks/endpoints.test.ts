import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertProblem, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import {
  deliveriesOf,
  drain,
  type Json,
  ok,
  privateApp,
  startReceiver,
  testWorker,
  write,
} from './support.ts';

const endpointId = /^whe_[0-9A-HJKMNP-TV-Z]{26}$/;
const secretForm = /^whsec_[A-Za-z0-9+/]{43}=$/;

describeEachDatabase('webhook endpoints over the API', (ctx) => {
  const base = '/v1/webhook-endpoints';
  const body = { url: 'https://hooks.example.com/cpq', eventTypes: ['bundle.created', 'bundle.deleted'] };

  test('POST answers 201 with the secret once; GET, the list and PATCH never show it', async () => {
    const created = await ctx.call('POST', base, { body: { ...body, description: 'CRM sync' } });
    assert.equal(created.status, 201, created.text);
    const endpoint = created.body;
    assert.match(endpoint.id, endpointId);
    assert.match(endpoint.secret, secretForm);
    assert.equal(created.headers.location, `${base}/${endpoint.id}`);
    assert.equal(created.headers.etag, `"${endpoint.id}:1"`);
    const { secret, ...shown } = endpoint;
    assert.deepEqual(shown, {
      id: endpoint.id,
      accountId: 'acme',
      url: body.url,
      eventTypes: body.eventTypes,
      description: 'CRM sync',
      isEnabled: true,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
      createdAt: endpoint.createdAt,
      updatedAt: endpoint.createdAt,
    });
    const read = await ctx.call('GET', `${base}/${endpoint.id}`);
    assert.deepEqual(read.body, shown);
    assert.equal(read.headers.etag, `"${endpoint.id}:1"`);
    const list = ok(await ctx.call('GET', base), 200);
    assert.ok(list.webhookEndpoints.some((e: Json) => e.id === endpoint.id));
    assert.ok(!JSON.stringify(list).includes(secret));

    const stale = await ctx.call('PATCH', `${base}/${endpoint.id}`, {
      body: { description: null },
      headers: { 'if-match': `"${endpoint.id}:9"` },
    });
    assertProblem(stale, 412, 'precondition_failed');
    const patched = await ctx.call('PATCH', `${base}/${endpoint.id}`, {
      body: { eventTypes: ['*'], description: null, isEnabled: false },
      headers: { 'if-match': `"${endpoint.id}:1"` },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.headers.etag, `"${endpoint.id}:2"`);
    assert.deepEqual(
      [
        patched.body.eventTypes,
        patched.body.description,
        patched.body.isEnabled,
        patched.body.disabledReason,
      ],
      [['*'], null, false, 'manual'],
    );
    assert.ok(!patched.text.includes(secret));
    const enabled = ok(await ctx.call('PATCH', `${base}/${endpoint.id}`, { body: { isEnabled: true } }), 200);
    assert.deepEqual([enabled.isEnabled, enabled.disabledReason], [true, null]);

    assertProblem(
      await ctx.call('DELETE', `${base}/${endpoint.id}`, { headers: { 'if-match': `"${endpoint.id}:1"` } }),
      412,
    );
    assert.equal((await ctx.call('DELETE', `${base}/${endpoint.id}`)).status, 204);
    assertProblem(await ctx.call('GET', `${base}/${endpoint.id}`), 404, 'not_found');
    assertProblem(await ctx.call('DELETE', `${base}/${endpoint.id}`), 404, 'not_found');
  });

  test('bad bodies: 400 for the schema, 422 with a pointer for a forbidden destination or a lone "*"', async () => {
    for (const [bad, pointer] of [
      [{ ...body, url: 'not a url' }, '/url'],
      [{ ...body, url: 'ftp://example.com/x' }, '/url'],
      [{ ...body, eventTypes: [] }, '/eventTypes'],
      [{ ...body, eventTypes: ['bundle.created', 'bundle.created'] }, '/eventTypes'],
      [{ ...body, eventTypes: ['nope'] }, '/eventTypes/0'],
      [{ ...body, secret: 'whsec_mine' }, '/secret'],
    ] as const) {
      const result = await ctx.call('POST', base, { body: bad });
      assertProblem(result, 400, 'validation_failed');
      assert.ok(
        result.body.errors.some((e: Json) => e.pointer === pointer),
        `${JSON.stringify(bad)}: ${result.text}`,
      );
    }
    for (const url of [
      'http://hooks.example.com/cpq',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://localhost/hook',
      'https://api.localhost/hook',
      'https://user:password@hooks.example.com/cpq',
    ]) {
      const result = await ctx.call('POST', base, { body: { ...body, url } });
      assertProblem(result, 422, 'destination_not_allowed');
      assert.deepEqual(
        result.body.errors.map((e: Json) => [e.code, e.pointer]),
        [['destination_not_allowed', '/url']],
        url,
      );
      assert.match(result.body.detail, /^The webhook destination is not allowed: \/url must /, url);
    }
    // With another problem beside it, the body breaks rules of more than one kind.
    const both = await ctx.call('POST', base, {
      body: { url: 'https://127.0.0.1/hook', eventTypes: ['*', 'bundle.created'] },
    });
    assertProblem(both, 422, 'rule_violation');
    assert.deepEqual(
      both.body.errors.map((e: Json) => e.code),
      ['destination_not_allowed', 'wildcard_not_alone'],
    );
    const wildcard = await ctx.call('POST', base, { body: { ...body, eventTypes: ['*', 'bundle.created'] } });
    assertProblem(wildcard, 422, 'rule_violation');
    assert.equal(wildcard.body.errors[0].code, 'wildcard_not_alone');
    const made = ok(await ctx.call('POST', base, { body }), 201);
    const patched = await ctx.call('PATCH', `${base}/${made.id}`, { body: { url: 'https://10.0.0.1/' } });
    assertProblem(patched, 422, 'destination_not_allowed');
    assert.equal(patched.body.errors[0].pointer, '/url');
  });

  test('with an Idempotency-Key the answer is replayed, secret included, and kept sealed like the secret', async () => {
    const stored = async (key: string) =>
      (
        await ctx.db
          .selectFrom('idempotency_keys')
          .select('response_body')
          .where('key', '=', key)
          .executeTakeFirstOrThrow()
      ).response_body as string;
    const headers = { 'idempotency-key': 'hook-once' };
    const first = await ctx.call('POST', base, { body, headers });
    const again = await ctx.call('POST', base, { body, headers });
    assert.equal(first.status, 201, first.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.text, first.text);
    // Without WEBHOOKS_SECRET_KEY the record is as unsealed as the secret itself.
    assert.equal(await stored('hook-once'), `plain.${first.text}`);

    const sealing = await otherInstance(ctx, { webhooksSecretKey: randomBytes(32).toString('hex') });
    try {
      const sealedHeaders = { 'idempotency-key': 'hook-sealed' };
      const made = await sealing.call('POST', base, { body, headers: sealedHeaders });
      assert.equal(made.status, 201, made.text);
      const rotateHeaders = { 'idempotency-key': 'hook-rotated' };
      const rotated = await sealing.call('POST', `${base}/${made.body.id}/rotate-secret`, {
        headers: rotateHeaders,
      });
      assert.equal(rotated.status, 200, rotated.text);
      for (const [key, answer] of [
        ['hook-sealed', made],
        ['hook-rotated', rotated],
      ] as const) {
        const record = await stored(key);
        assert.match(record, /^v1\./);
        assert.ok(!record.includes(answer.body.secret.slice(6, 30)), 'the secret is not kept in the clear');
      }
      const replayed = await sealing.call('POST', base, { body, headers: sealedHeaders });
      assert.equal(replayed.text, made.text);
      assert.equal(
        (await sealing.call('POST', `${base}/${made.body.id}/rotate-secret`, { headers: rotateHeaders }))
          .text,
        rotated.text,
      );
      // An instance without the key cannot open the record: 503, and no second endpoint.
      assertProblem(
        await ctx.call('POST', base, { body, headers: sealedHeaders }),
        503,
        'service_unavailable',
      );
    } finally {
      await sealing.close();
    }
  });

  test('a read-only key reads endpoints but may not write them', async () => {
    const reader = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('GET', base, { key: reader })).status, 200);
    assertProblem(await ctx.call('POST', base, { key: reader, body }), 403, 'forbidden');
  });

  test('another account’s endpoints and deliveries: 404 on every route, never listed', async () => {
    const mine = await ctx.newKey('hooks-mine');
    const theirs = await ctx.newKey('hooks-theirs');
    const endpoint = ok(await ctx.call('POST', base, { key: mine, body }), 201);
    const event = await write(ctx, 'TENANT', mine);
    assert.deepEqual(ok(await ctx.call('GET', base, { key: theirs }), 200), { webhookEndpoints: [] });
    const path = `${base}/${endpoint.id}`;
    for (const [method, url, sent] of [
      ['GET', path],
      ['PATCH', path, { description: 'mine now' }],
      ['DELETE', path],
      ['POST', `${path}/rotate-secret`],
      ['GET', `${path}/deliveries`],
      ['POST', `${path}/deliveries/${event.id}/retry`],
    ] as const) {
      assertProblem(await ctx.call(method, url, { key: theirs, body: sent }), 404, 'not_found');
    }
    const still = ok(await ctx.call('GET', path, { key: mine }), 200);
    assert.deepEqual([still.description, still.previousSecretExpiresAt], [null, null]);
  });

  test('at most 100 endpoints per account (422)', async () => {
    const key = await ctx.newKey('hooks-many');
    for (let i = 0; i < 100; i++) ok(await ctx.call('POST', base, { key, body }), 201);
    const refused = await ctx.call('POST', base, { key, body });
    assertProblem(refused, 422, 'rule_violation');
    assert.equal(refused.body.errors[0].code, 'too_many_endpoints');
  });
});

describeEachDatabase('webhook deliveries over the API', (ctx) => {
  let hooks: Awaited<ReturnType<typeof privateApp>>;
  before(async () => {
    hooks = await privateApp(ctx);
  });
  after(async () => {
    await hooks?.close();
  });

  test('deliveries page newest first, filter by status; retry makes one due; 404 and 422 where due', async () => {
    const key = await ctx.newKey('hooks-paging');
    const receiver = await startReceiver((n) => (n % 2 === 0 ? 200 : 503));
    try {
      const endpoint = ok(
        await hooks.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, eventTypes: ['bundle.created'] },
        }),
        201,
      );
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await write(ctx, `PAGE-${i}`, key)).id);
      // Not subscribed: no delivery.
      ok(await ctx.call('PATCH', `/v1/bundles/${made[0]}`, { key, body: { isActive: false } }), 200);
      const worker = testWorker(ctx.db, { endpointConcurrency: 1 });
      await worker.runOnce();
      await worker.runOnce();
      await worker.runOnce();
      await worker.runOnce();
      await worker.runOnce();
      const events = ok(
        await ctx.call('GET', '/v1/events', { key, query: { types: 'bundle.created' } }),
        200,
      ).events;
      const ids = events.map((e: Json) => e.id).reverse();
      const all = await deliveriesOf(ctx, endpoint.id, key);
      assert.deepEqual(
        all.map((d: Json) => d.eventId),
        ids,
      );
      assert.deepEqual(all.map((d: Json) => d.status).sort(), [
        'delivered',
        'delivered',
        'delivered',
        'pending',
        'pending',
      ]);
      for (const d of all) {
        assert.equal(d.eventType, 'bundle.created');
        assert.equal(d.attemptCount, 1);
        assert.equal(d.attempts.length, 1);
        assert.equal(typeof d.attempts[0].durationMs, 'number');
        if (d.status === 'pending') {
          assert.deepEqual([d.attempts[0].responseStatus, d.attempts[0].error], [503, 'answered HTTP 503']);
          assert.ok(d.nextAttemptAt > d.attempts[0].at);
        } else {
          assert.deepEqual(
            [d.attempts[0].responseStatus, d.attempts[0].error, d.nextAttemptAt],
            [200, null, null],
          );
        }
      }
      const url = `/v1/webhook-endpoints/${endpoint.id}/deliveries`;
      const first = ok(await ctx.call('GET', url, { key, query: { limit: '2' } }), 200);
      assert.deepEqual(first.deliveries, all.slice(0, 2));
      const second = ok(
        await ctx.call('GET', url, { key, query: { limit: '2', nextKey: first.nextKey } }),
        200,
      );
      assert.deepEqual(second.deliveries, all.slice(2, 4));
      const last = ok(
        await ctx.call('GET', url, { key, query: { limit: '2', nextKey: second.nextKey } }),
        200,
      );
      assert.deepEqual(last, { deliveries: all.slice(4) });
      const pending = ok(await ctx.call('GET', url, { key, query: { status: 'pending' } }), 200);
      assert.deepEqual(
        pending.deliveries,
        all.filter((d: Json) => d.status === 'pending'),
      );
      assertProblem(await ctx.call('GET', url, { key, query: { status: 'sent' } }), 400);
      assertProblem(await ctx.call('GET', url, { key, query: { nextKey: 'made-up' } }), 400);

      const delivered = all.find((d: Json) => d.status === 'delivered');
      const retried = await ctx.call('POST', `${url}/${delivered.eventId}/retry`, { key });
      assert.equal(retried.status, 202, retried.text);
      assert.equal(retried.body.status, 'pending');
      assert.ok(retried.body.nextAttemptAt <= new Date().toISOString());
      assertProblem(await ctx.call('POST', `${url}/evt_00000000000000000000000000/retry`, { key }), 404);
      ok(
        await ctx.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: { isEnabled: false } }),
        200,
      );
      const disabled = await ctx.call('POST', `${url}/${delivered.eventId}/retry`, { key });
      assertProblem(disabled, 422, 'rule_violation');
      assert.deepEqual(disabled.body.errors[0], {
        code: 'endpoint_disabled',
        in: 'path',
        pointer: '/endpointId',
        message: 'is disabled',
      });
    } finally {
      await receiver.close();
    }
  });

  test('an endpoint gets the events recorded after it was made, of its types; ["*"] gets every type', async () => {
    const key = await ctx.newKey('hooks-types');
    const receiver = await startReceiver();
    try {
      await write(ctx, 'BEFORE', key);
      const only = ok(
        await hooks.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, eventTypes: ['bundle.updated'] },
        }),
        201,
      );
      const every = ok(
        await hooks.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, eventTypes: ['*'] },
        }),
        201,
      );
      const bundle = await write(ctx, 'AFTER', key);
      ok(await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, { key, body: { isActive: false } }), 200);
      await drain(testWorker(ctx.db));
      assert.deepEqual(
        (await deliveriesOf(ctx, only.id, key)).map((d: Json) => d.eventType),
        ['bundle.updated'],
      );
      assert.deepEqual(
        (await deliveriesOf(ctx, every.id, key)).map((d: Json) => d.eventType),
        ['bundle.updated', 'bundle.created'],
      );
      assert.equal(receiver.received.length, 3);
      assert.ok(receiver.received.every((r) => r.event.data.object.header.productId === 'AFTER'));
    } finally {
      await receiver.close();
    }
  });

  test('signed per Standard Webhooks: standardwebhooks verifies it, and after a rotation either secret does', async () => {
    const key = await ctx.newKey('hooks-signed');
    const receiver = await startReceiver();
    try {
      const endpoint = ok(
        await hooks.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, eventTypes: ['*'] },
        }),
        201,
      );
      const bundle = await write(ctx, 'SIGNED', key);
      await drain(testWorker(ctx.db));
      const [first] = receiver.received;
      assert.ok(first);
      const verified = new Webhook(endpoint.secret).verify(
        first.body,
        first.headers as Record<string, string>,
      );
      const [event] = ok(await ctx.call('GET', '/v1/events', { key }), 200).events;
      assert.deepEqual(verified, event);
      assert.equal(event.data.object.id, bundle.id);
      assert.equal(first.headers['webhook-id'], event.id);
      assert.match(String(first.headers['content-type']), /^application\/json/);
      assert.ok(Math.abs(Number(first.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      assert.match(String(first.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
      const otherSecret = ok(
        await hooks.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, eventTypes: ['*'] },
        }),
        201,
      ).secret;
      assert.throws(() =>
        new Webhook(otherSecret).verify(first.body, first.headers as Record<string, string>),
      );
      const tampered = first.body.replace('SIGNED', 'SIGNEE');
      assert.throws(() =>
        new Webhook(endpoint.secret).verify(tampered, first.headers as Record<string, string>),
      );

      const rotated = await ctx.call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key });
      assert.equal(rotated.status, 200, rotated.text);
      assert.match(rotated.body.secret, secretForm);
      assert.notEqual(rotated.body.secret, endpoint.secret);
      const overlap = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
      assert.ok(overlap > 23.9 * 3600_000 && overlap <= 24 * 3600_000, `${overlap}`);
      assert.equal(rotated.headers.etag, `"${endpoint.id}:2"`);
      await write(ctx, 'ROTATED', key);
      await drain(testWorker(ctx.db));
      const second = receiver.received.find(
        (r) =>
          r.event.data.object.header?.productId === 'ROTATED' &&
          r.headers['webhook-signature']?.includes(' '),
      );
      assert.ok(second, 'a delivery during the overlap carries two signatures');
      for (const secret of [endpoint.secret, rotated.body.secret]) {
        assert.ok(new Webhook(secret).verify(second.body, second.headers as Record<string, string>));
      }
    } finally {
      await receiver.close();
    }
  });
});
