import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { connect, type DatabaseHandle } from '../../src/db/connect.ts';
import { createKey, revokeApiKey } from '../../src/keys/keys.service.ts';
import {
  assertProblem,
  type CallOptions,
  callApp,
  describeEachDatabase,
  testConfig,
} from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

const missingId = 'bnd_01M7Z4FGHN62EHBXHK2BWGA38Q';
const missingBookId = 'pb_01M7Z4FGHN62EHBXHK2BWGA38Q';

/** A bundle priced in USD in both its options, and what each cached read asks of it. */
async function pricedBundle(ctx: Parameters<typeof createBundle>[0]) {
  const { bundle, options } = await createBundle(ctx);
  const [base, extras] = options;
  for (const option of [base, extras]) {
    const result = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: option.products.map((p: Json) => ({
        productId: p.productId,
        currency: 'USD',
        standardPrice: 10,
      })),
    });
    assert.equal(result.status, 200, result.text);
  }
  return {
    bundle,
    base,
    extras,
    quote: {
      currency: 'USD',
      bundles: [
        {
          bundleId: bundle.id,
          options: [{ optionId: base.id, products: [{ productId: 'BASE-L', quantity: 1 }] }],
        },
      ],
    },
    configure: { currency: 'USD', selections: [{ optionId: base.id, productId: 'BASE-L', quantity: 1 }] },
  };
}

// Instance B has its own connection to the context's database, counted: every statement a request runs through it
// is one round trip. Each request is made once first, so the count is of the warm one: the key known to B, the
// answer in B's cache.
describeEachDatabase('statements per warm request', (ctx) => {
  let other: App;
  let handle: DatabaseHandle;
  let counted: ReturnType<typeof countingQueries>;
  let priced: Awaited<ReturnType<typeof pricedBundle>>;
  let second: Awaited<ReturnType<typeof pricedBundle>>;

  before(async () => {
    handle = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    counted = countingQueries(handle.db);
    other = await buildApp({ config: testConfig(), database: { ...handle, db: counted.db } });
    priced = await pricedBundle(ctx);
    second = await pricedBundle(ctx);
  });

  after(async () => {
    await other?.close();
    await handle?.db.destroy();
  });

  /** The statements of the second of two identical requests through B, which must answer `status`. */
  async function warm(method: 'GET' | 'POST', url: string, options: CallOptions, status = 200) {
    const first = await callApp(other, ctx.key, method, url, options);
    assert.equal(first.status, status, first.text);
    counted.take();
    const again = await callApp(other, ctx.key, method, url, options);
    assert.equal(again.status, status, again.text);
    return counted.take();
  }

  test('bundle details: one statement, the stamps with the key, for one bundle or several', async () => {
    const details = (bundleIds: string) => warm('GET', '/v1/bundles-details', { query: { bundleIds } });
    assert.equal(await details(priced.bundle.id), 1);
    assert.equal(await details(`${priced.bundle.id},${second.bundle.id},${missingId}`), 1);
    assert.equal(await details(missingId), 1, 'nothing found: the key is still read');
    const notModified = async () => {
      const first = await callApp(other, ctx.key, 'GET', '/v1/bundles-details', {
        query: { bundleIds: priced.bundle.id },
      });
      counted.take();
      const again = await callApp(other, ctx.key, 'GET', '/v1/bundles-details', {
        query: { bundleIds: priced.bundle.id },
        headers: { 'if-none-match': first.headers.etag as string },
      });
      assert.equal(again.status, 304);
      return counted.take();
    };
    assert.equal(await notModified(), 1, 'a 304 as well');
  });

  test('a quote and a configuration: one statement', async () => {
    assert.equal(await warm('POST', '/v1/quotes/price', { body: priced.quote }), 1);
    const both = {
      ...priced.quote,
      bundles: [...priced.quote.bundles, ...second.quote.bundles],
    };
    assert.equal(await warm('POST', '/v1/quotes/price', { body: both }), 1);
    assert.equal(
      await warm('POST', `/v1/bundles/${priced.bundle.id}/configure`, { body: priced.configure }),
      1,
    );
    assert.equal(
      await warm('POST', '/v1/quotes/price', { body: { ...priced.quote, currency: 'EUR' } }, 422),
      1,
      'a quote refused by its rules (no EUR price) was still served by the one statement',
    );
  });

  test('a page of bundles: one statement, the key confirmed in it, on any page, empty or not', async () => {
    const list = (query: Record<string, string>) => warm('GET', '/v1/bundles', { query });
    assert.equal(await list({ limit: '1' }), 1);
    const first = await callApp(other, ctx.key, 'GET', '/v1/bundles', { query: { limit: '1' } });
    assert.equal(await list({ limit: '1', nextKey: first.body.nextKey }), 1);
    assert.equal(await list({ productId: 'nothing-has-this' }), 1, 'an empty page: the key is still read');
    assert.equal(await list({ isActive: 'true', limit: '2' }), 1);
  });

  test('a price book search: one statement, the key confirmed in it, for a book found or not', async () => {
    const search = (id: string, query: Record<string, string> = {}) =>
      warm('GET', `/v1/pricebooks/${id}/pricedProducts`, { query }, id === missingBookId ? 404 : 200);
    assert.equal(await search(priced.base.priceBookId), 1);
    assert.equal(await search(priced.base.priceBookId, { q: 'base', currency: 'USD', limit: '1' }), 1);
    assert.equal(await search(missingBookId), 1, 'nothing found: the key is still read');
  });

  test('routes whose read does not confirm the key look it up first, as before', async () => {
    assert.equal(await warm('GET', '/v1/keys/current', {}), 1, 'the lookup alone');
    const at = { bundleIds: priced.bundle.id, at: '2030-01-01T00:00:00Z' };
    const uncached = await warm('GET', '/v1/bundles-details', { query: at });
    const built = await warm('GET', '/v1/bundles-details', { query: { ...at, at: '2031-01-01T00:00:00Z' } });
    assert.equal(
      uncached,
      built,
      'an answer for another instant is built each time, and the key looked up once',
    );
  });

  test('a key first seen by this instance is looked up once; an unknown key is looked up every time', async () => {
    const fresh = await ctx.newKey('acme');
    const details = { query: { bundleIds: priced.bundle.id } };
    counted.take();
    assert.equal((await callApp(other, fresh, 'GET', '/v1/bundles-details', details)).status, 200);
    assert.equal(counted.take(), 2, 'the lookup, then the stamps (the answer is cached already)');
    assert.equal((await callApp(other, fresh, 'GET', '/v1/bundles-details', details)).status, 200);
    assert.equal(counted.take(), 1);

    // Never remembered: an unknown key costs the lookup it always did, and answers as it always did.
    const unknown = `cpq_${randomBytes(32).toString('base64url')}`;
    for (let i = 0; i < 2; i++) {
      assertProblem(
        await callApp(other, unknown, 'GET', '/v1/bundles-details', details),
        401,
        'unauthorized',
      );
      assert.equal(counted.take(), 1);
    }
  });
});

// A is the context's app, B a second app with its own connection to the same database, as a second process would
// be; both remember the key. It is revoked as the command line does, outside either: both refuse it at once, on
// every path of every route whose read confirms it, whatever their caches hold.
describeEachDatabase('a revoked key across instances', (ctx) => {
  let other: App;
  let handle: DatabaseHandle;

  before(async () => {
    handle = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    other = await buildApp({ config: testConfig(), database: handle });
  });

  after(async () => {
    await other?.close();
    await handle?.db.destroy();
  });

  test('is refused at once by every instance, cached answers and all, and a new key works at once', async () => {
    const priced = await pricedBundle(ctx);
    const details = { query: { bundleIds: priced.bundle.id } };
    const configureUrl = `/v1/bundles/${priced.bundle.id}/configure`;
    const requests: [string, 'GET' | 'POST', string, (tag: string) => CallOptions][] = [
      ['details', 'GET', '/v1/bundles-details', () => details],
      [
        'details, 304 before',
        'GET',
        '/v1/bundles-details',
        (tag) => ({ ...details, headers: { 'if-none-match': tag } }),
      ],
      [
        'details for another instant',
        'GET',
        '/v1/bundles-details',
        () => ({ query: { ...details.query, at: '2030-01-01T00:00:00Z' } }),
      ],
      ['quote', 'POST', '/v1/quotes/price', () => ({ body: priced.quote })],
      [
        'quote with an Idempotency-Key',
        'POST',
        '/v1/quotes/price',
        () => ({ body: priced.quote, headers: { 'idempotency-key': 'revoked-quote' } }),
      ],
      ['configure', 'POST', configureUrl, () => ({ body: priced.configure })],
      [
        'configure, a missing bundle',
        'POST',
        `/v1/bundles/${missingId}/configure`,
        () => ({ body: { selections: [] } }),
      ],
      [
        'configure for another instant, a missing bundle',
        'POST',
        `/v1/bundles/${missingId}/configure`,
        () => ({ body: { selections: [], at: '2030-01-01T00:00:00Z' } }),
      ],
      [
        'quote for another instant',
        'POST',
        '/v1/quotes/price',
        () => ({ body: { ...priced.quote, at: '2030-01-01T00:00:00Z' } }),
      ],
      ['a list', 'GET', '/v1/bundles', () => ({})],
      ['a search', 'GET', `/v1/pricebooks/${priced.base.priceBookId}/pricedProducts`, () => ({})],
      ['a search, a missing book', 'GET', `/v1/pricebooks/${missingBookId}/pricedProducts`, () => ({})],
    ];
    const apps = { A: ctx.app, B: other };
    const tags = new Map<App, string>();
    // Each path with a key of its own, which both instances remember (and hold answers for) when it is revoked.
    for (const [what, method, url, options] of requests) {
      const made = await createKey(ctx.db, { accountId: 'acme', name: what, readOnly: false });
      for (const app of Object.values(apps)) {
        for (let i = 0; i < 2; i++) {
          const read = await callApp(app, made.plaintext, 'GET', '/v1/bundles-details', details);
          assert.equal(read.status, 200, read.text);
          tags.set(app, read.headers.etag as string);
          const quoted = await callApp(app, made.plaintext, 'POST', '/v1/quotes/price', {
            body: priced.quote,
          });
          assert.equal(quoted.status, 200, quoted.text);
          const configured = await callApp(app, made.plaintext, 'POST', configureUrl, {
            body: priced.configure,
          });
          assert.equal(configured.status, 200, configured.text);
          const searched = await callApp(
            app,
            made.plaintext,
            'GET',
            `/v1/pricebooks/${priced.base.priceBookId}/pricedProducts`,
            {},
          );
          assert.equal(searched.status, 200, searched.text);
        }
      }
      await revokeApiKey(ctx.db, made.key.id);
      for (const [name, app] of Object.entries(apps)) {
        const refused = await callApp(app, made.plaintext, method, url, options(tags.get(app) as string));
        assert.equal(
          refused.status,
          401,
          `${name}: ${what}: ${refused.status} ${refused.text.slice(0, 200)}`,
        );
        assertProblem(refused, 401, 'unauthorized');
        // Refused again, now that the instance has forgotten the key.
        assertProblem(await callApp(app, made.plaintext, 'GET', '/v1/bundles-details', details), 401);
      }
    }
    const claims = await ctx.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'revoked-quote')
      .execute();
    assert.deepEqual(claims, [], 'a revoked key claims nothing');

    // The rotation's other half: a key made now is good on every instance at once, and the account's other keys
    // never stopped working.
    const next = (await createKey(ctx.db, { accountId: 'acme', name: 'next', readOnly: false })).plaintext;
    for (const app of Object.values(apps)) {
      for (const presented of [next, ctx.key]) {
        const read = await callApp(app, presented, 'GET', '/v1/bundles-details', details);
        assert.equal(read.status, 200, read.text);
        assert.equal(read.headers.etag, tags.get(app));
        assert.equal(
          (await callApp(app, presented, 'POST', '/v1/quotes/price', { body: priced.quote })).status,
          200,
        );
      }
    }
  });

  test('a request refused before its read gets that refusal, and the next read refuses the key', async () => {
    const priced = await pricedBundle(ctx);
    const made = await createKey(ctx.db, { accountId: 'acme', name: 'late', readOnly: false });
    const details = { query: { bundleIds: priced.bundle.id } };
    for (let i = 0; i < 2; i++) {
      assert.equal((await callApp(other, made.plaintext, 'GET', '/v1/bundles-details', details)).status, 200);
    }
    await revokeApiKey(ctx.db, made.key.id);
    // A bad query tells nothing of the account: it is refused as it is, before anything is read.
    const bad = await callApp(other, made.plaintext, 'GET', '/v1/bundles-details', {
      query: { bundleIds: ',' },
    });
    assertProblem(bad, 400, 'validation_failed');
    assertProblem(
      await callApp(other, made.plaintext, 'GET', '/v1/bundles-details', details),
      401,
      'unauthorized',
    );
  });

  test("a key of another account never reads this one's cached answers", async () => {
    const priced = await pricedBundle(ctx);
    const details = { query: { bundleIds: priced.bundle.id } };
    assert.equal((await callApp(other, ctx.key, 'GET', '/v1/bundles-details', details)).status, 200);
    const stranger = await ctx.newKey('globex');
    for (let i = 0; i < 2; i++) {
      const read = await callApp(other, stranger, 'GET', '/v1/bundles-details', details);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, { bundles: [], notFound: [priced.bundle.id] });
    }
  });
});
