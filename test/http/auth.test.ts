import assert from 'node:assert/strict';
import { hash, randomBytes } from 'node:crypto';
import { before, test } from 'node:test';
import { createKey, KnownKeys, revokeApiKey } from '../../src/keys/keys.service.ts';
import { assertProblem, type CallResult, describeEachDatabase } from '../helpers/app.ts';

interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** The OpenAPI security requirement names readWrite: a read-only key is refused. */
  writes: boolean;
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

// Routes of every area are read from the app's own OpenAPI document, so a route added later is checked without
// touching this file. The probe routes keep every case exercised while an area has no routes yet.
describeEachDatabase('API keys on every /v1 route', (ctx) => {
  const operations: Operation[] = [];
  const keys = { readOnly: '', revoked: '', unknown: `cpq_${randomBytes(32).toString('base64url')}` };

  before(async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      ctx.app.route({ method, url: '/v1/auth-probe', handler: async () => ({ ok: true }) });
    }
    ctx.app.post('/v1/auth-probe/reads', { config: { readOnlyAllowed: true } }, async () => ({ ok: true }));
    await ctx.app.ready();

    const document = ctx.app.swagger() as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    };
    for (const [path, item] of Object.entries(document.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const method of methods) {
        const operation = item[method];
        if (!operation) continue;
        operations.push({
          method: method.toUpperCase() as Operation['method'],
          url: path.replace(/\{[^}]+\}/g, 'x'),
          writes: operation.security?.some((requirement) => 'readWrite' in requirement) ?? false,
        });
      }
    }

    keys.readOnly = await ctx.newKey('acme', { readOnly: true });
    const revoked = await createKey(ctx.db, { accountId: 'acme', name: 'to revoke', readOnly: false });
    await revokeApiKey(ctx.db, revoked.key.id);
    keys.revoked = revoked.plaintext;
  });

  /** Calls every operation with one key and returns the ones that did not answer as expected. */
  async function everyOperation(
    key: string | null,
    check: (operation: Operation, result: CallResult) => void,
  ): Promise<string[]> {
    const failures: string[] = [];
    for (const operation of operations) {
      const result = await ctx.call(operation.method, operation.url, { key });
      try {
        check(operation, result);
      } catch (error) {
        failures.push(`${operation.method} ${operation.url}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    return failures;
  }

  test('the routes come from the app, the probes among them', () => {
    const listed = operations.map((o) => `${o.method} ${o.url}`);
    for (const probe of ['GET /v1/auth-probe', 'DELETE /v1/auth-probe', 'POST /v1/auth-probe/reads']) {
      assert.ok(listed.includes(probe), probe);
    }
    assert.ok(
      operations.some((o) => !o.url.startsWith('/v1/auth-probe')),
      'the areas register /v1 routes',
    );
    assert.deepEqual(
      operations.filter((o) => o.method === 'GET' && o.writes),
      [],
      'a GET never needs write access',
    );
  });

  test('no key: 401 everywhere', async () => {
    assert.deepEqual(await everyOperation(null, (_o, r) => assertProblem(r, 401, 'unauthorized')), []);
  });

  test('an empty key: 401 everywhere', async () => {
    assert.deepEqual(await everyOperation('', (_o, r) => assertProblem(r, 401, 'unauthorized')), []);
  });

  test('an unknown key of the right shape: 401 everywhere', async () => {
    assert.deepEqual(
      await everyOperation(keys.unknown, (_o, r) => assertProblem(r, 401, 'unauthorized')),
      [],
    );
  });

  test('a key of the wrong shape: 401 everywhere', async () => {
    assert.deepEqual(await everyOperation('Bearer nonsense', (_o, r) => assertProblem(r, 401)), []);
  });

  test('a revoked key: 401 everywhere', async () => {
    assert.deepEqual(
      await everyOperation(keys.revoked, (_o, r) => assertProblem(r, 401, 'unauthorized')),
      [],
    );
  });

  test('a read-only key: 403 on every write, except where a write only reads', async () => {
    const failures = await everyOperation(keys.readOnly, (operation, result) => {
      if (operation.writes) {
        assertProblem(result, 403, 'forbidden');
      } else {
        assert.ok(![401, 403].includes(result.status), `answered ${result.status}`);
      }
    });
    assert.deepEqual(failures, []);
    assert.ok(
      operations.some((o) => o.method !== 'GET' && !o.writes),
      'the readOnlyAllowed probe is open to read-only keys',
    );
  });

  test('a read-write key passes authentication everywhere', async () => {
    const failures = await everyOperation(ctx.key, (_operation, result) => {
      assert.ok(
        ![401, 403].includes(result.status),
        `answered ${result.status} ${result.text.slice(0, 200)}`,
      );
      assert.ok(result.status < 500, `answered ${result.status} ${result.text.slice(0, 200)}`);
    });
    assert.deepEqual(failures, []);
  });

  test('the operational endpoints need no key', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs/']) {
      const result = await ctx.call('GET', url, { key: null });
      assert.equal(result.status, 200, url);
    }
  });
});

test('the keys a process remembers: past 10,000 the least recently presented goes, the most recent stays', () => {
  const known = new KnownKeys();
  const account = { id: 'acme', keyId: 'key_1', readOnly: false, approver: false, keyName: null };
  const presented = Array.from({ length: 10_001 }, (_, i) => `cpq_${String(i).padStart(43, '0')}`);
  for (const key of presented.slice(0, 10_000)) known.remember(hash('sha256', key), account);
  // The first is recalled (moved to the most recent), the last twice (already the most recent, it stays).
  assert.ok(known.recall(presented[0] as string));
  assert.ok(known.recall(presented[9_999] as string));
  assert.ok(known.recall(presented[9_999] as string));
  known.remember(hash('sha256', presented[10_000] as string), account);
  assert.equal(known.recall(presented[1] as string), undefined, 'the least recently presented went');
  for (const i of [0, 2, 9_999, 10_000]) assert.ok(known.recall(presented[i] as string), `key ${i} kept`);
});
