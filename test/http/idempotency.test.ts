import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { IDEMPOTENCY_LEASE_MS } from '../../src/http/idempotency.ts';
import {
  assertProblem,
  type CallOptions,
  type CallResult,
  callApp,
  describeEachDatabase,
  testConfig,
} from '../helpers/app.ts';

const bundleBody = (productId: string) => ({ header: { productId, properties: { color: 'grey' } } });

describeEachDatabase('Idempotency-Key', (ctx) => {
  /** Releases the n-th call of the gated probe; a call without a gate answers at once. */
  const gates = new Map<number, { open: () => void; opened: Promise<void>; started: Promise<void> }>();
  const started = new Map<number, () => void>();
  let gatedCalls = 0;
  let flakyCalls = 0;
  const others: App[] = [];

  function gate(call: number) {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const began = new Promise<void>((resolve) => started.set(call, resolve));
    gates.set(call, { open, opened, started: began });
    return gates.get(call) as { open: () => void; started: Promise<void> };
  }

  before(async () => {
    ctx.app.post('/v1/idempotency-probe/gated', async (_request, reply) => {
      const call = ++gatedCalls;
      started.get(call)?.();
      await gates.get(call)?.opened;
      return reply.code(201).header('location', `/v1/idempotency-probe/${call}`).send({ call });
    });
    ctx.app.post('/v1/idempotency-probe/flaky', async () => {
      flakyCalls++;
      if (flakyCalls === 1) throw new Error('the first call fails');
      return { call: flakyCalls };
    });
    await ctx.app.ready();
  });

  after(async () => {
    for (const app of others) await app.close();
  });

  async function account(name: string) {
    const key = await ctx.newKey(name);
    return {
      key,
      call: (method: 'POST' | 'GET', url: string, idempotencyKey: string | null, options: CallOptions = {}) =>
        ctx.call(method, url, {
          key,
          ...options,
          headers: {
            ...options.headers,
            ...(idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey }),
          },
        }),
    };
  }

  async function count(table: 'bundles' | 'idempotency_keys', accountId: string): Promise<number> {
    const row = await ctx.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  function assertReplayOf(replay: CallResult, first: CallResult): void {
    assert.equal(replay.status, first.status);
    assert.equal(replay.text, first.text);
    assert.equal(replay.headers['content-type'], first.headers['content-type']);
    assert.equal(replay.headers.location, first.headers.location);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.notEqual(
      replay.headers['x-request-id'],
      first.headers['x-request-id'],
      'the replay has its own id',
    );
  }

  test('a repeat replays the first status, body and Location, and creates nothing', async () => {
    const acme = await account('idem-replay');
    const first = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') });
    assert.equal(first.status, 201, first.text);
    assert.match(String(first.headers.location), /^\/v1\/bundles\/bnd_/);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    for (let i = 0; i < 3; i++) {
      assertReplayOf(await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') }), first);
    }
    assert.equal(await count('bundles', 'idem-replay'), 1);
  });

  test('the same body with its keys in another order, or a default sent explicitly, is the same request', async () => {
    const acme = await account('idem-canonical');
    const first = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') });
    assert.equal(first.status, 201);
    const reordered = '{"header":{"properties":{"color":"grey"},"productId":"P-1"},"isActive":true}';
    assertReplayOf(await acme.call('POST', '/v1/bundles', 'k-1', { body: reordered }), first);
    assert.equal(await count('bundles', 'idem-canonical'), 1);
  });

  test('the same key with another body or URL is 409 idempotency_key_reused, and runs nothing', async () => {
    const acme = await account('idem-reused');
    assert.equal((await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') })).status, 201);
    const otherBody = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-2') });
    assertProblem(otherBody, 409, 'idempotency_key_reused');
    const otherUrl = await acme.call('POST', '/v1/quotes/price', 'k-1', {
      body: { currency: 'USD', bundles: [{ bundleId: 'bnd_x', options: [] }] },
    });
    assertProblem(otherUrl, 409, 'idempotency_key_reused');
    assert.equal(await count('bundles', 'idem-reused'), 1);
  });

  test('a repeat while the first is running is 409 idempotency_key_in_flight; after it, a replay', async () => {
    const acme = await account('idem-in-flight');
    const call = gatedCalls + 1;
    const { open, started: running } = gate(call);
    const first = acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } });
    await running;
    const during = await acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } });
    assertProblem(during, 409, 'idempotency_key_in_flight');
    assert.equal(during.headers['retry-after'], '1');
    const otherBody = await acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 2 } });
    assertProblem(otherBody, 409, 'idempotency_key_reused');
    open();
    const answered = await first;
    assert.deepEqual([answered.status, answered.body], [201, { call }]);
    assertReplayOf(
      await acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } }),
      answered,
    );
    assert.equal(gatedCalls, call, 'the handler ran once');
  });

  test('concurrent duplicates of a create: it runs once, the others are in flight or replay it', async () => {
    const acme = await account('idem-race');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') })),
    );
    const created = results.filter((r) => r.status === 201);
    for (const result of results)
      if (result.status !== 201) assertProblem(result, 409, 'idempotency_key_in_flight');
    assert.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1);
    assert.equal(new Set(created.map((r) => r.body.id)).size, 1);
    assert.equal(await count('bundles', 'idem-race'), 1);
  });

  test('a claim whose lease lapsed (its process died) is taken over by the retry', async () => {
    const acme = await account('idem-lease');
    const call = gatedCalls + 1;
    const { open, started: running } = gate(call);
    const stalled = acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } });
    await running;
    const leaseEnded = new Date(Date.now() - 1).toISOString();
    await ctx.db
      .updateTable('idempotency_keys')
      .set({ locked_until: leaseEnded })
      .where('account_id', '=', 'idem-lease')
      .execute();

    const retry = await acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } });
    assert.deepEqual([retry.status, retry.body], [201, { call: call + 1 }]);
    // The stalled request answers late; its claim was taken over, so the record keeps the retry's answer.
    open();
    assert.equal((await stalled).status, 201);
    assertReplayOf(await acme.call('POST', '/v1/idempotency-probe/gated', 'k-1', { body: { a: 1 } }), retry);
  });

  test('a lapsed claim of another request is still 409 idempotency_key_reused', async () => {
    const acme = await account('idem-lease-other');
    const now = Date.now();
    await ctx.db
      .insertInto('idempotency_keys')
      .values({
        account_id: 'idem-lease-other',
        key: 'k-1',
        request_hash: 'another request',
        claim_token: 'dead',
        status: null,
        response_headers: null,
        response_body: null,
        created_at: new Date(now - 2 * IDEMPOTENCY_LEASE_MS).toISOString(),
        expires_at: new Date(now + 3_600_000).toISOString(),
        locked_until: new Date(now - IDEMPOTENCY_LEASE_MS).toISOString(),
      })
      .execute();
    const result = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') });
    assertProblem(result, 409, 'idempotency_key_reused');
  });

  test('keys are scoped to the account: the same key in two accounts runs twice', async () => {
    const one = await account('idem-scope-1');
    const two = await account('idem-scope-2');
    const first = await one.call('POST', '/v1/bundles', 'shared', { body: bundleBody('P-1') });
    const second = await two.call('POST', '/v1/bundles', 'shared', { body: bundleBody('P-1') });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.notEqual(first.body.id, second.body.id);
    assert.equal(second.body.accountId, 'idem-scope-2');
    assert.equal(await count('bundles', 'idem-scope-1'), 1);
    assert.equal(await count('bundles', 'idem-scope-2'), 1);
  });

  test('the record is in the database: another instance on it replays', async () => {
    const acme = await account('idem-instances');
    const first = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') });
    assert.equal(first.status, 201);
    const other = await buildApp({ config: testConfig(), database: ctx.database.handle });
    others.push(other);
    const replay = await callApp(other, acme.key, 'POST', '/v1/bundles', {
      body: bundleBody('P-1'),
      headers: { 'idempotency-key': 'k-1' },
    });
    assertReplayOf(replay, first);
    assert.equal(await count('bundles', 'idem-instances'), 1);
  });

  test('a 5xx is not kept: the retry runs again, and its answer is the one replayed', async () => {
    const acme = await account('idem-5xx');
    const failed = await acme.call('POST', '/v1/idempotency-probe/flaky', 'k-1');
    assertProblem(failed, 500, 'internal_error');
    assert.equal(await count('idempotency_keys', 'idem-5xx'), 0);
    const retried = await acme.call('POST', '/v1/idempotency-probe/flaky', 'k-1');
    assert.deepEqual([retried.status, retried.body], [200, { call: 2 }]);
    assertReplayOf(await acme.call('POST', '/v1/idempotency-probe/flaky', 'k-1'), retried);
    assert.equal(flakyCalls, 2);
  });

  test('a 4xx answer is kept and replayed; the quote POST takes a key, from a read-only key too', async () => {
    const readOnly = await ctx.newKey('idem-4xx', { readOnly: true });
    const body = { currency: 'USD', bundles: [{ bundleId: 'bnd_missing', options: [] }] };
    const headers = { 'idempotency-key': 'quote-1' };
    const first = await ctx.call('POST', '/v1/quotes/price', { key: readOnly, body, headers });
    assertProblem(first, 422, 'unknown_reference');
    assertReplayOf(await ctx.call('POST', '/v1/quotes/price', { key: readOnly, body, headers }), first);
  });

  test('a configure answer, sent as bytes, is kept and replayed as the same text', async () => {
    const acme = await account('idem-configure');
    const made = await acme.call('POST', '/v1/bundles', null, {
      body: {
        ...bundleBody('P-1'),
        options: [
          { name: 'Memory', type: 'INCLUDED', products: [{ productId: 'RAM-16' }, { productId: 'RAM-32' }] },
        ],
      },
    });
    assert.equal(made.status, 201, made.text);
    const url = `/v1/bundles/${made.body.id}/configure`;
    const body = { selections: [] };
    const first = await acme.call('POST', url, 'configure-1', { body });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.options.length, 1);
    assert.equal(await count('idempotency_keys', 'idem-configure'), 1);
    assertReplayOf(await acme.call('POST', url, 'configure-1', { body }), first);
  });

  test('a request refused before it runs is not recorded: the key stays free', async () => {
    const acme = await account('idem-refused');
    const invalid = await acme.call('POST', '/v1/bundles', 'k-1', { body: { header: {} } });
    assertProblem(invalid, 400, 'validation_failed');
    assert.equal(await count('idempotency_keys', 'idem-refused'), 0);
    assert.equal((await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') })).status, 201);
  });

  test('without the header nothing is recorded, and repeats run again', async () => {
    const acme = await account('idem-none');
    for (let i = 0; i < 2; i++) {
      assert.equal((await acme.call('POST', '/v1/bundles', null, { body: bundleBody('P-1') })).status, 201);
    }
    assert.equal(await count('bundles', 'idem-none'), 2);
    assert.equal(await count('idempotency_keys', 'idem-none'), 0);
  });

  test('after 24 hours a record counts as absent, and expired records are purged', async () => {
    const acme = await account('idem-expiry');
    const day = 24 * 3_600_000;
    const now = Date.now();
    const expired = (key: string) => ({
      account_id: 'idem-expiry',
      key,
      request_hash: 'another request',
      claim_token: `token-${key}`,
      status: 201,
      response_headers: '{"content-type":"application/json; charset=utf-8"}',
      response_body: '{"old":true}',
      created_at: new Date(now - day - 1000).toISOString(),
      expires_at: new Date(now - 1000).toISOString(),
      locked_until: null,
    });
    await ctx.db.insertInto('idempotency_keys').values(['k-1', 'old-1', 'old-2'].map(expired)).execute();
    const result = await acme.call('POST', '/v1/bundles', 'k-1', { body: bundleBody('P-1') });
    assert.equal(result.status, 201, result.text);
    assert.equal(result.headers['idempotent-replayed'], undefined);
    // A new key purges the account's expired records.
    assert.equal((await acme.call('POST', '/v1/bundles', 'k-2', { body: bundleBody('P-2') })).status, 201);
    const keys = await ctx.db
      .selectFrom('idempotency_keys')
      .select(['key', 'expires_at'])
      .where('account_id', '=', 'idem-expiry')
      .orderBy('key')
      .execute();
    assert.deepEqual(
      keys.map((k) => k.key),
      ['k-1', 'k-2'],
    );
    for (const { expires_at } of keys) {
      const hours = (Date.parse(expires_at) - now) / 3_600_000;
      assert.ok(hours > 23.9 && hours <= 24.1, `kept 24 hours, not ${hours}`);
    }
  });

  test('an empty, overlong or non-printable key is 400 with a pointer into the headers', async () => {
    const acme = await account('idem-invalid');
    for (const bad of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const result = await acme.call('POST', '/v1/bundles', bad, { body: bundleBody('P-1') });
      assertProblem(result, 400, 'validation_failed');
      const places = new Set(
        result.body.errors.map((e: { in: string; pointer: string }) => `${e.in} ${e.pointer}`),
      );
      assert.deepEqual([...places], ['header /idempotency-key'], JSON.stringify(bad));
    }
    assert.equal(await count('bundles', 'idem-invalid'), 0);
    const longest = await acme.call('POST', '/v1/bundles', 'k'.repeat(255), { body: bundleBody('P-1') });
    assert.equal(longest.status, 201);
  });

  test('the OpenAPI document gives every POST the optional header and its 409, and no other method', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the document is read freely
    const document: any = (await ctx.call('GET', '/openapi.json', { key: null })).body;
    let posts = 0;
    for (const [path, item] of Object.entries<Record<string, { parameters?: unknown[]; responses: object }>>(
      document.paths,
    )) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        const header = (operation.parameters ?? []).find(
          (p) =>
            (p as { in: string; name: string }).in === 'header' &&
            (p as { name: string }).name === 'idempotency-key',
        ) as { required?: boolean; schema: { maxLength: number } } | undefined;
        if (method !== 'post') {
          assert.equal(header, undefined, `${method} ${path}`);
          continue;
        }
        posts++;
        assert.ok(header, `POST ${path} documents Idempotency-Key`);
        assert.notEqual(header.required, true);
        assert.equal(header.schema.maxLength, 255);
        assert.ok('409' in operation.responses, `POST ${path} documents 409`);
      }
    }
    assert.ok(posts > 5);
  });
});
