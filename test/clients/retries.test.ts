// The client's own behaviour around the API: an Idempotency-Key on every POST, kept across retries; 429 and 503
// tried again after Retry-After; If-Match sent as given. Checked against a stand-in server on a real port that
// records what it receives (the service itself is exercised by typescript-client.test.ts).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createClient, retryAfterMs } from '../../clients/typescript/src/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe('The TypeScript client’s retries and headers', () => {
  let server: Server;
  let baseUrl: string;
  const seen: Seen[] = [];
  /** Answers to give, in order; when none is left, 200 {}. */
  const script: { status: number; headers?: Record<string, string>; body?: unknown }[] = [];

  before(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
        const next = script.shift() ?? { status: 200, body: {} };
        response.writeHead(next.status, {
          'content-type': next.status >= 400 ? 'application/problem+json' : 'application/json',
          ...next.headers,
        });
        response.end(JSON.stringify(next.body ?? { status: next.status, code: 'rate_limited' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a POST carries an Idempotency-Key, the same on each retry of a 429 and a 503', async () => {
    seen.length = 0;
    script.push(
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 503, headers: { 'retry-after': '0' } },
    );
    script.push({ status: 201, body: { id: 'bnd_1' } });
    const api = createClient({ baseUrl, apiKey: 'cpq_test' });
    const { data, response } = await api.POST('/v1/bundles', {
      body: { header: { productId: 'P', properties: {} } },
    });
    assert.equal(response.status, 201);
    assert.deepEqual(data, { id: 'bnd_1' });
    assert.equal(seen.length, 3);
    const keys = seen.map((request) => request.headers['idempotency-key']);
    assert.match(String(keys[0]), /^[0-9a-f]{32}$/);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
    assert.deepEqual(
      seen.map((request) => JSON.parse(request.body)),
      Array(3).fill({ header: { productId: 'P', properties: {} } }),
    );
    assert.ok(seen.every((request) => request.headers['x-api-key'] === 'cpq_test'));
  });

  test('two POSTs get two keys, and a key the caller gives is kept', async () => {
    seen.length = 0;
    const api = createClient({ baseUrl, apiKey: 'cpq_test' });
    const body = { header: { productId: 'P', properties: {} } };
    await api.POST('/v1/bundles', { body });
    await api.POST('/v1/bundles', { body });
    await api.POST('/v1/bundles', { body, headers: { 'idempotency-key': 'mine' } });
    const [first, second, third] = seen.map((request) => request.headers['idempotency-key']);
    assert.notEqual(first, second);
    assert.equal(third, 'mine');
  });

  test('gives up after the attempts allowed, or at once when Retry-After is longer than it waits', async () => {
    seen.length = 0;
    script.push(...Array(3).fill({ status: 429, headers: { 'retry-after': '0' } }));
    const api = createClient({ baseUrl, apiKey: 'cpq_test', retry: { attempts: 2 } });
    const { error, response } = await api.GET('/v1/bundles');
    assert.equal(response.status, 429);
    assert.equal(error?.code, 'rate_limited');
    assert.equal(seen.length, 3);
    script.length = 0;

    seen.length = 0;
    script.push({ status: 503, headers: { 'retry-after': '120' } });
    const started = Date.now();
    assert.equal((await api.GET('/v1/bundles')).response.status, 503);
    assert.equal(seen.length, 1);
    assert.ok(Date.now() - started < 1000);
  });

  test('If-Match goes out as given, and a GET or PATCH carries no Idempotency-Key', async () => {
    seen.length = 0;
    const api = createClient({ baseUrl, apiKey: 'cpq_test' });
    await api.PATCH('/v1/bundles/{bundleId}', {
      params: { path: { bundleId: 'bnd_1' }, header: { 'if-match': '"bnd_1:4"' } },
      body: { isActive: false },
    });
    await api.GET('/v1/bundles');
    assert.equal(seen[0]?.headers['if-match'], '"bnd_1:4"');
    assert.ok(seen.every((request) => request.headers['idempotency-key'] === undefined));
  });

  test('reads Retry-After as seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(null), 1000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
    assert.equal(retryAfterMs('soon'), 1000);
  });
});
