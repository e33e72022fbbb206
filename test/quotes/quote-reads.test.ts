import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { createKey, revokeApiKey } from '../../src/keys/keys.service.ts';
import { assertProblem, callApp, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { ok, pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

// Quotes are written through A (the context's app) and read through B, a second instance on the same database
// with its own connection and its own kept answers: B must never answer a quote as its row no longer is.
describeEachDatabase('reading a saved quote from kept answers, across instances', (ctx) => {
  let b: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    b = await otherInstance(ctx);
  });

  after(async () => {
    await b?.close();
  });

  /** An open quote, saved, submitted and finalized through A. */
  async function openQuote(body: Json = {}): Promise<Json> {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: { currency: 'USD', bundles: [configuration()], ...body },
      }),
      201,
    );
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    return ok(await ctx.call('POST', `/v1/quotes/${q.id}/finalize`), 200);
  }

  test('a warm read is one statement, and a write through the other instance shows at once', async () => {
    const q = await openQuote();
    const first = await b.call('GET', `/v1/quotes/${q.id}`);
    const fromA = await ctx.call('GET', `/v1/quotes/${q.id}`);
    assert.deepEqual(ok(first, 200), ok(fromA, 200));
    assert.equal(first.headers.etag, fromA.headers.etag);
    b.counted.take();
    const warm = await b.call('GET', `/v1/quotes/${q.id}`);
    assert.equal(warm.text, first.text);
    assert.equal(warm.headers.etag, first.headers.etag);
    assert.equal(b.counted.take(), 1, 'the key and the quote’s version, in one statement');

    const notModified = await b.call('GET', `/v1/quotes/${q.id}`, {
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    assert.equal(notModified.status, 304);

    const accepted = await ctx.call('POST', `/v1/quotes/${q.id}/accept`);
    ok(accepted, 200);
    const after = await b.call('GET', `/v1/quotes/${q.id}`);
    assert.equal(ok(after, 200).status, 'accepted');
    assert.equal(after.headers.etag, accepted.headers.etag);
    assert.deepEqual(after.body, ok(await ctx.call('GET', `/v1/quotes/${q.id}`), 200));
  });

  test('a kept answer goes out compressed, and the same as plain', async () => {
    const q = await openQuote();
    const plain = await b.call('GET', `/v1/quotes/${q.id}`);
    for (let i = 0; i < 2; i++) {
      const response = await b.app.inject({
        method: 'GET',
        url: `/v1/quotes/${q.id}`,
        headers: { 'x-api-key': ctx.key, 'accept-encoding': 'br' },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-encoding'], 'br');
      assert.equal(brotliDecompressSync(response.rawPayload).toString(), plain.text);
    }
  });

  test('an open quote kept while open reads as expired once its expiresAt passes, nothing written', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const q = await openQuote({ expiresAt: soon });
    const open = await b.call('GET', `/v1/quotes/${q.id}`);
    assert.equal(ok(open, 200).status, 'open');
    assert.equal(ok(await b.call('GET', `/v1/quotes/${q.id}`), 200).status, 'open');
    await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 50));
    const expired = await b.call('GET', `/v1/quotes/${q.id}`);
    assert.equal(ok(expired, 200).status, 'expired');
    assert.deepEqual({ ...expired.body, status: 'open' }, open.body);
  });

  test('a revoked key is refused on a warm read; 404 for a quote of another account or none', async () => {
    const q = await openQuote();
    const made = await createKey(ctx.db, { accountId: 'acme', name: null, readOnly: true, approver: false });
    ok(await callApp(b.app, made.plaintext, 'GET', `/v1/quotes/${q.id}`), 200);
    ok(await callApp(b.app, made.plaintext, 'GET', `/v1/quotes/${q.id}`), 200);
    await revokeApiKey(ctx.db, made.key.id);
    assertProblem(await callApp(b.app, made.plaintext, 'GET', `/v1/quotes/${q.id}`), 401);

    const stranger = await ctx.newKey('other-account');
    assertProblem(await callApp(b.app, stranger, 'GET', `/v1/quotes/${q.id}`), 404, 'not_found');
    assertProblem(await callApp(b.app, stranger, 'GET', `/v1/quotes/${q.id}`), 404, 'not_found');
    assertProblem(await b.call('GET', '/v1/quotes/quo_01M7Z4FGHN62EHBXHK2BWGA38Q'), 404, 'not_found');
  });
});
