import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { preferredCoding } from '../../src/http/compression.ts';
import { expectedVersions } from '../../src/http/conditional.ts';
import { describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

test('Accept-Encoding: br or gzip by q-value, br on a tie, identity when it is preferred', () => {
  const cases: [string | undefined, string | null][] = [
    [undefined, null],
    ['', null],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0.8, gzip;q=0.8', 'br'],
    ['identity', null],
    ['br;q=0.5, identity', null],
    ['br, identity;q=0.5', 'br'],
    ['*', 'br'],
    ['*;q=0', null],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0', null],
    ['deflate', null],
    ['BR ; Q=0.9 , GZIP;q=0.2', 'br'],
  ];
  for (const [header, coding] of cases) assert.equal(preferredCoding(header), coding, String(header));
});

test('If-Match reads the version through the tag of a compressed representation', () => {
  const request = (header: string) => ({ headers: { 'if-match': header } }) as unknown as FastifyRequest;
  assert.deepEqual(expectedVersions(request('"bnd_1:3;br", "bnd_1:4;gzip", "bnd_1:5"'), 'bnd_1'), [3, 4, 5]);
  assert.deepEqual(expectedVersions(request('W/"bnd_1:3;br"'), 'bnd_1'), []);
});

/** The answer's bytes as sent, and as the client reads them once decoded. */
async function get(ctx: TestContext, url: string, headers: Record<string, string> = {}) {
  const res = await ctx.app.inject({ method: 'GET', url, headers: { 'x-api-key': ctx.key, ...headers } });
  const coding = res.headers['content-encoding'];
  const decoded =
    coding === 'br'
      ? brotliDecompressSync(res.rawPayload)
      : coding === 'gzip'
        ? gunzipSync(res.rawPayload)
        : res.rawPayload;
  return { res, coding, decoded: decoded.toString('utf8') };
}

async function cachedBytes(ctx: TestContext): Promise<number> {
  const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith('cpq_cache_bytes{cache="details"}'));
  return Number(line?.split(' ').at(-1));
}

describeEachDatabase('compressed answers', (ctx) => {
  async function bundle() {
    const { bundle, options } = await createBundle(ctx);
    const prices = options.flatMap((o) =>
      o.products.map((p: { productId: string }) => ({
        productId: p.productId,
        currency: 'USD',
        standardPrice: 5,
      })),
    );
    for (const option of options) {
      const own = prices.filter((p) =>
        option.products.some((q: { productId: string }) => q.productId === p.productId),
      );
      const res = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, { body: own });
      assert.equal(res.status, 200, res.text);
    }
    return `/v1/bundles-details?bundleIds=${bundle.id}`;
  }

  test('cached details: br and gzip decode to the plain bytes, on the miss and on hits, each made once', async () => {
    const url = await bundle();
    const first = await get(ctx, url, { 'accept-encoding': 'br' });
    assert.equal(first.res.statusCode, 200);
    assert.equal(first.coding, 'br', 'the miss is answered compressed too');
    const plain = await get(ctx, url);
    assert.equal(plain.coding, undefined);
    assert.ok(plain.res.rawPayload.byteLength >= 1024, `${plain.res.rawPayload.byteLength} bytes`);
    assert.equal(first.decoded, plain.decoded);
    assert.ok(first.res.rawPayload.byteLength < plain.res.rawPayload.byteLength);

    const before = await cachedBytes(ctx);
    const gzipped = await get(ctx, url, { 'accept-encoding': 'gzip' });
    assert.equal(gzipped.coding, 'gzip');
    assert.equal(gzipped.decoded, plain.decoded);
    const after = await cachedBytes(ctx);
    assert.equal(after - before, gzipped.res.rawPayload.byteLength, 'the cache counts the compressed form');
    const again = await get(ctx, url, { 'accept-encoding': 'gzip' });
    assert.deepEqual(again.res.rawPayload, gzipped.res.rawPayload);
    assert.equal(await cachedBytes(ctx), after, 'made once per version');
    const brAgain = await get(ctx, url, { 'accept-encoding': 'gzip;q=0.5, br' });
    assert.deepEqual(brAgain.res.rawPayload, first.res.rawPayload);
  });

  test('ETag per representation, Vary: Accept-Encoding, and If-None-Match still answers 304', async () => {
    const url = await bundle();
    const plain = await get(ctx, url);
    const br = await get(ctx, url, { 'accept-encoding': 'br' });
    const tag = String(plain.res.headers.etag);
    assert.equal(br.res.headers.etag, `${tag.slice(0, -1)};br"`);
    for (const answer of [plain, br]) assert.match(String(answer.res.headers.vary), /accept-encoding/i);

    const held = await get(ctx, url, {
      'accept-encoding': 'br',
      'if-none-match': String(br.res.headers.etag),
    });
    assert.equal(held.res.statusCode, 304);
    assert.equal(held.res.headers.etag, br.res.headers.etag);
    assert.equal(held.res.headers['content-encoding'], undefined);
    assert.equal(held.res.rawPayload.byteLength, 0);
    const plainHeld = await get(ctx, url, { 'if-none-match': tag });
    assert.equal(plainHeld.res.statusCode, 304);
    const other = await get(ctx, url, { 'if-none-match': String(br.res.headers.etag) });
    assert.equal(other.res.statusCode, 200, 'a client holding the br bytes that now asks plain gets them');
    assert.equal(other.decoded, plain.decoded);
  });

  test('uncached answers are compressed as they go out: details at an instant, a list', async () => {
    const url = `${await bundle()}&at=${encodeURIComponent(new Date().toISOString())}`;
    const plain = await get(ctx, url);
    for (const coding of ['br', 'gzip']) {
      const encoded = await get(ctx, url, { 'accept-encoding': coding });
      assert.equal(encoded.coding, coding);
      assert.equal(encoded.decoded, plain.decoded);
      const held = await get(ctx, url, {
        'accept-encoding': coding,
        'if-none-match': String(encoded.res.headers.etag),
      });
      assert.equal(held.res.statusCode, 304);
    }
    await bundle();
    const list = await get(ctx, '/v1/bundles?limit=100');
    assert.ok(list.res.rawPayload.byteLength >= 1024);
    const gzipped = await get(ctx, '/v1/bundles?limit=100', { 'accept-encoding': 'gzip' });
    assert.equal(gzipped.coding, 'gzip');
    assert.equal(gzipped.decoded, list.decoded);
    assert.match(String(gzipped.res.headers.vary), /accept-encoding/i);
  });

  test('small answers, and clients asking identity, get the plain bytes', async () => {
    const url = await bundle();
    const id = new URL(url, 'http://x').searchParams.get('bundleIds');
    const small = await get(ctx, `/v1/bundles/${id}`, { 'accept-encoding': 'br' });
    assert.equal(small.res.statusCode, 200);
    assert.ok(small.res.rawPayload.byteLength < 1024);
    assert.equal(small.coding, undefined);
    assert.doesNotMatch(String(small.res.headers.etag), /;br"$/);
    const identity = await get(ctx, url, { 'accept-encoding': 'identity, br;q=0.5' });
    assert.equal(identity.coding, undefined);
    assert.equal(identity.decoded, (await get(ctx, url)).decoded);
  });
});
