import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Migrator } from 'kysely';
import { listBundles } from '../../src/bundles/bundles.service.ts';
import { SharedReads } from '../../src/catalogue/shared-reads.ts';
import { migrateToLatest, migrations } from '../../src/db/migrate.ts';
import {
  type Account,
  authenticate,
  createKey,
  KnownKeys,
  revokeApiKey,
} from '../../src/keys/keys.service.ts';
import { makeScope } from '../../src/shared/scope.ts';
import { assertProblem, callApp, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { countingQueries } from '../helpers/query-counter.ts';

const instant = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachDatabase('lists and timestamps', (ctx) => {
  test('a page of bundles is one statement, option counts and the key included', async () => {
    const key = await ctx.newKey('one-statement');
    const created = await createBundle(ctx, { key });
    const account = (await authenticate(ctx.db, key, new KnownKeys())) as Account;
    const counted = countingQueries(ctx.db);
    const { bundles } = await listBundles(makeScope({ db: counted.db, account }), {
      query: { limit: 5 },
      reads: new SharedReads(),
    });
    assert.equal(counted.take(), 1);
    assert.deepEqual(
      bundles.map((b) => [b.id, b.includedOptionsCount, b.addOnOptionsCount]),
      [[created.bundle.id, created.bundle.includedOptionsCount, created.bundle.addOnOptionsCount]],
    );
    assert.ok(created.bundle.includedOptionsCount + created.bundle.addOnOptionsCount > 0);
  });

  test('GET /v1/bundles/{bundleId}/options lists the plain form in display order; 404 for another account', async () => {
    const { bundle } = await createBundle(ctx, {
      options: [
        { name: 'Late', displayOrder: 9 },
        { name: 'Early', displayOrder: 1, products: [{ productId: 'P-1' }] },
        { name: 'Tie', displayOrder: 9 },
      ],
    });
    const listed = await ctx.call('GET', `/v1/bundles/${bundle.id}/options`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.options.map((o: { name: string }) => o.name),
      ['Early', 'Late', 'Tie'],
    );
    for (const option of listed.body.options) {
      const { products, ...plain } = (await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${option.id}`))
        .body;
      assert.ok(Array.isArray(products));
      assert.deepEqual(option, plain);
    }
    const empty = await createBundle(ctx, { options: [] });
    assert.deepEqual((await ctx.call('GET', `/v1/bundles/${empty.bundle.id}/options`)).body, { options: [] });
    assertProblem(
      await ctx.call('GET', `/v1/bundles/${bundle.id}/options`, { key: await ctx.newKey('lists-other') }),
      404,
      'not_found',
    );
    assertProblem(await ctx.call('GET', '/v1/bundles/bnd_nope/options'), 404, 'not_found');
  });

  test('GET /v1/bundles?productId= lists the bundles whose header is that product, paged', async () => {
    const product = `LIST-HDR-${ctx.dialect}`;
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        (await createBundle(ctx, { header: { productId: product, properties: {} }, options: [] })).bundle,
      );
    }
    await createBundle(ctx, { header: { productId: `${product}-other`, properties: {} }, options: [] });
    const first = await ctx.call('GET', '/v1/bundles', { query: { productId: product, limit: '2' } });
    assert.equal(first.status, 200, first.text);
    const second = await ctx.call('GET', '/v1/bundles', {
      query: { productId: product, limit: '2', nextKey: first.body.nextKey },
    });
    assert.deepEqual(
      [...first.body.bundles, ...second.body.bundles].map((b: { id: string }) => b.id),
      made.map((b) => b.id),
    );
    assert.equal('nextKey' in second.body, false);
    const none = await ctx.call('GET', '/v1/bundles', { query: { productId: 'NO-SUCH-PRODUCT' } });
    assert.deepEqual(none.body, { bundles: [] });
    const inactive = await ctx.call('GET', '/v1/bundles', {
      query: { productId: product, isActive: 'false' },
    });
    assert.deepEqual(inactive.body, { bundles: [] });
  });

  test('GET /v1/pricebooks?bundleOptionId= lists an option’s books newest first, a keyset page at a time', async () => {
    const { options } = await createBundle(ctx);
    const option = options[0];
    const ids = [option.priceBookId];
    for (let i = 0; i < 4; i++) {
      const made = await ctx.call('POST', '/v1/pricebooks', {
        body: { bundleOptionId: option.id, name: `B${i}` },
      });
      assert.equal(made.status, 201, made.text);
      ids.push(made.body.id);
    }
    await ctx.call('DELETE', `/v1/pricebooks/${ids[1]}`);
    const seen: string[] = [];
    let nextKey: string | undefined;
    do {
      const query: Record<string, string> = { bundleOptionId: option.id, limit: '2' };
      if (nextKey !== undefined) query.nextKey = nextKey;
      const page = await ctx.call('GET', '/v1/pricebooks', { query });
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.priceBooks.length <= 2);
      seen.push(...page.body.priceBooks.map((b: { id: string }) => b.id));
      nextKey = page.body.nextKey;
    } while (nextKey !== undefined);
    assert.deepEqual(seen, [...ids].reverse());
    const all = await ctx.call('GET', '/v1/pricebooks', { query: { bundleOptionId: option.id } });
    const deleted = all.body.priceBooks.find((b: { id: string }) => b.id === ids[1]);
    assert.equal(deleted.isDeleted, true);
    assert.deepEqual(all.body.priceBooks[0], (await ctx.call('GET', `/v1/pricebooks/${ids[4]}`)).body);
  });

  test('GET /v1/pricebooks: an option the account lacks is 422 unknown_reference; a made-up nextKey 400', async () => {
    const { options } = await createBundle(ctx);
    for (const key of [ctx.key, await ctx.newKey('lists-stranger')]) {
      const bundleOptionId = key === ctx.key ? 'opt_nope' : options[0].id;
      const result = await ctx.call('GET', '/v1/pricebooks', { key, query: { bundleOptionId } });
      assertProblem(result, 422, 'unknown_reference');
      assert.deepEqual(
        result.body.errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
        [['query', '/bundleOptionId']],
      );
    }
    const forged = Buffer.from('bnd_01M7Z4FGHN62EHBXHK2BWGA38R').toString('base64url');
    for (const nextKey of ['nope', forged]) {
      const result = await ctx.call('GET', '/v1/pricebooks', {
        query: { bundleOptionId: options[0].id, nextKey },
      });
      assertProblem(result, 400, 'validation_failed');
    }
    assertProblem(await ctx.call('GET', '/v1/pricebooks'), 400, 'validation_failed');
  });

  test('createdAt and updatedAt: set on creation, updatedAt moves with a change, createdAt never', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [option] = options;
    const [product] = option.products;
    const book = (await ctx.call('GET', `/v1/pricebooks/${option.priceBookId}`)).body;
    for (const record of [bundle, option, product, book]) {
      assert.match(record.createdAt, instant);
      assert.match(record.updatedAt, instant);
      assert.ok(record.updatedAt >= record.createdAt);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const optionUrl = `/v1/bundles/${bundle.id}/options/${option.id}`;
    const changed = {
      bundle: (await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, { body: { isActive: false } })).body,
      product: (
        await ctx.call('PUT', `${optionUrl}/products/${product.productId}`, { body: { displayOrder: 3 } })
      ).body,
      option: (await ctx.call('PUT', optionUrl, { body: { name: 'Renamed' } })).body,
      book: (await ctx.call('PATCH', `/v1/pricebooks/${book.id}`, { body: { name: 'Renamed' } })).body,
    };
    for (const [name, before, after] of [
      ['bundle', bundle, changed.bundle],
      ['option', option, changed.option],
      ['product', product, changed.product],
      ['book', book, changed.book],
    ] as const) {
      assert.equal(after.createdAt, before.createdAt, name);
      assert.ok(after.updatedAt > before.updatedAt, `${name}: ${after.updatedAt} after ${before.updatedAt}`);
    }
  });

  test('the migration gives option products stored before it their option’s creation instant', async () => {
    const { options } = await createBundle(ctx);
    const [option] = options;
    const { db } = ctx;
    // Undo 0006 and every later migration on this database, leaving the products as 0005 knew them, and migrate again.
    const undone = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(
      '0005_events',
    );
    assert.equal(undone.error, undefined);
    const later = Object.keys(migrations).filter((name) => name > '0005_events');
    assert.ok(later.includes('0006_timestamps_and_list_indexes'));
    assert.deepEqual(await migrateToLatest(db), later);
    const read = (await ctx.call('GET', `/v1/bundles/${option.bundleId}/options/${option.id}`)).body;
    assert.ok(read.products.length > 0);
    for (const product of read.products) {
      assert.equal(product.createdAt, option.createdAt);
      assert.equal(product.updatedAt, option.createdAt);
    }
  });

  test('the migration counts the options of bundles stored before it', async () => {
    const { bundle } = await createBundle(ctx);
    const listed = async () =>
      (await ctx.call('GET', '/v1/bundles', { query: { limit: '100' } })).body.bundles.find(
        (b: { id: string }) => b.id === bundle.id,
      );
    const before = await listed();
    assert.ok(before.includedOptionsCount > 0 && before.addOnOptionsCount > 0, JSON.stringify(before));
    const undone = await new Migrator({
      db: ctx.db,
      provider: { getMigrations: async () => migrations },
    }).migrateTo('0011_sqlite_search_index');
    assert.equal(undone.error, undefined);
    assert.deepEqual(await migrateToLatest(ctx.db), [
      '0012_option_counts',
      '0013_quotes',
      '0014_approvals',
      '0016_quote_expiry_events',
    ]);
    const after = await listed();
    assert.equal(after.includedOptionsCount, before.includedOptionsCount);
    assert.equal(after.addOnOptionsCount, before.addOnOptionsCount);
  });
});

// Instance B is a second app with its own connection, as a second process would be; writes go through A.
describeEachDatabase('a page of bundles asked at once', (ctx) => {
  let other: Awaited<ReturnType<typeof otherInstance>>;
  before(async () => {
    other = await otherInstance(ctx);
  });
  after(() => other?.close());

  // The requests arrive together, as a load balancer's would: most share a statement (SharedReads). A bundle made
  // through A lands in the middle of them, and the page asked through B once A has answered must hold it, however
  // many statements B has under way or waiting.
  test('requests at once share statements, and a bundle made meanwhile shows at once', async () => {
    const header = { productId: 'LISTED-AT-ONCE', properties: {} };
    const query = { productId: header.productId, limit: '100' };
    const list = () => other.call('GET', '/v1/bundles', { query });
    const together = 40;
    assert.equal((await list()).status, 200, 'B knows the key before the crowd comes');
    for (let made = 1; made <= 4; made++) {
      other.counted.take();
      const crowd = Array.from({ length: together }, list);
      const created = await ctx.call('POST', '/v1/bundles', { body: { header } });
      assert.equal(created.status, 201, created.text);
      const after = await list();
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.bundles.length, made);
      assert.ok(after.body.bundles.some((b: { id: string }) => b.id === created.body.id));
      for (const read of await Promise.all(crowd)) {
        assert.equal(read.status, 200, read.text);
        assert.ok([made - 1, made].includes(read.body.bundles.length), `${read.body.bundles.length} bundles`);
      }
      if (made === 1) {
        const statements = other.counted.take();
        assert.ok(statements < together, `${together + 1} requests, ${statements} statements`);
      }
    }
    const metrics = await other.app.inject({ method: 'GET', url: '/metrics' });
    const joined = /^cpq_shared_reads_total\{read="bundle_list"\} (\d+)$/m.exec(metrics.body);
    assert.ok(joined && Number(joined[1]) > 0, 'the joined reads are counted');
  });

  test('a key revoked while requests with it share reads is refused by the next request', async () => {
    const made = await createKey(ctx.db, {
      accountId: 'acme',
      name: 'revoked-while-listing',
      readOnly: false,
    });
    const list = () => callApp(other.app, made.plaintext, 'GET', '/v1/bundles');
    assert.equal((await list()).status, 200);
    const crowd = Array.from({ length: 20 }, list);
    await revokeApiKey(ctx.db, made.key.id);
    const after = await list();
    assert.equal(after.status, 401, after.text);
    for (const read of await Promise.all(crowd)) assert.ok([200, 401].includes(read.status), read.text);
  });
});
