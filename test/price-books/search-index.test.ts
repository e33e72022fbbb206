// A large book's search goes through SQLite's trigram index when `q` is selective (migration 0011,
// src/price-books/price-books.repository.ts). These check that both ways of reading answer the same, that every
// write keeps the index in step with option_products, and that VACUUM does not part them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle, expectStatus } from '../helpers/factories.ts';

const ENTRIES = 1_001;
const productIdOf = (i: number) => `BIG-${String(i).padStart(4, '0')}`;
const label = (i: number) => (i % 3 === 0 ? `Enterprise tier ${i}` : `Basic tier ${i}`);

describeEachDatabase('price book search through the trigram index', (ctx) => {
  let bookId = '';
  let productsUrl = '';
  let optionUrl = '';

  const search = async (q: string, query: Record<string, string> = {}) => {
    const answer = expectStatus(
      await ctx.call('GET', `/v1/pricebooks/${bookId}/pricedProducts`, {
        query: { q, limit: '100', ...query },
      }),
      200,
      `search ${q}`,
    );
    return {
      total: answer.total as number,
      ids: (answer.results as { productId: string }[]).map((r) => r.productId),
      results: answer.results as { productId: string; properties: Record<string, string> }[],
    };
  };

  /** Checks the index against option_products: FTS5 throws when a row's trigrams are not what its text makes. */
  const indexInStep = async () => {
    if (ctx.dialect !== 'sqlite') return;
    await sql`insert into option_products_search (option_products_search, rank) values ('integrity-check', 1)`.execute(
      ctx.db,
    );
  };

  test('a book over a thousand entries', async () => {
    const products = Array.from({ length: ENTRIES }, (_, i) => ({
      productId: productIdOf(i),
      properties: { label: label(i), code: i === 500 ? 'odd*one?[x]' : `c${i}` },
    }));
    const { options } = await createBundle(ctx, {
      options: [{ name: 'Tiers', products: products.slice(0, 500) }],
    });
    const [option] = options;
    optionUrl = `/v1/bundles/${option.bundleId}/options/${option.id}`;
    productsUrl = `${optionUrl}/products`;
    for (const batch of [products.slice(500, 1000), products.slice(1000)]) {
      expectStatus(await ctx.call('POST', productsUrl, { body: batch }), 201, 'add products');
    }
    bookId = option.priceBookId;
    for (const batch of [products.slice(0, 1000), products.slice(1000)]) {
      const prices = batch.map((p, i) => ({ productId: p.productId, currency: 'USD', standardPrice: i + 1 }));
      expectStatus(await ctx.call('PUT', `/v1/pricebooks/${bookId}/prices`, { body: prices }), 200, 'prices');
    }
    await indexInStep();
  });

  test('a q naming one product finds it, with its properties and prices', async () => {
    const found = await search('big-0777');
    assert.equal(found.total, 1);
    assert.deepEqual(found.ids, ['BIG-0777']);
    assert.deepEqual(found.results[0]?.properties, { label: label(777), code: 'c777' });
    assert.deepEqual((await search('Basic tier 1000')).ids, ['BIG-1000']);
    assert.deepEqual((await search('no such text')).ids, []);
  });

  test('GLOB and LIKE wildcards in q are plain characters', async () => {
    assert.deepEqual((await search('odd*one?[x]')).ids, ['BIG-0500']);
    assert.deepEqual((await search('*one?')).ids, ['BIG-0500']);
    assert.deepEqual((await search('[x]')).ids, ['BIG-0500']);
    assert.deepEqual((await search('odd*one?[y]')).ids, []);
    assert.deepEqual((await search('odd_one')).ids, []);
    assert.deepEqual((await search('g-07%')).ids, []);
  });

  test('a broad q and a short q count every match and page in the option order', async () => {
    const broad = await search('enterprise', { offset: '30', limit: '5' });
    assert.equal(broad.total, 334);
    assert.deepEqual(broad.ids, [90, 93, 96, 99, 102].map(productIdOf));
    const short = await search('99');
    assert.equal(short.total, 19);
    assert.deepEqual(short.ids.slice(0, 3), ['BIG-0099', 'BIG-0199', 'BIG-0299']);
  });

  test('the index follows changed, removed and re-added products', async () => {
    expectStatus(
      await ctx.call('PUT', `${productsUrl}/BIG-0777`, { body: { properties: { label: 'Renamed' } } }),
      200,
      'change properties',
    );
    assert.deepEqual((await search('c777')).ids, []);
    assert.deepEqual((await search('renamed')).ids, ['BIG-0777']);
    expectStatus(await ctx.call('DELETE', `${optionUrl}/BIG-0778`), 200, 'remove a product');
    assert.deepEqual((await search('big-0778')).ids, []);
    expectStatus(
      await ctx.call('POST', productsUrl, {
        body: [{ productId: 'BIG-0778', properties: { label: 'Back again' } }],
      }),
      201,
      're-add the product',
    );
    expectStatus(
      await ctx.call('PUT', `/v1/pricebooks/${bookId}/prices`, {
        body: [{ productId: 'BIG-0778', currency: 'USD', standardPrice: 5 }],
      }),
      200,
      'price it',
    );
    assert.deepEqual((await search('back again')).ids, ['BIG-0778']);
    await indexInStep();
  });

  test('SQLite: a selective q is read through the index, a broad one from the book', async (t) => {
    if (ctx.dialect !== 'sqlite') return t.skip('SQLite only');
    // Take BIG-0333 out of the index alone: a search that reads the index no longer finds it; one that reads the
    // book's entries still does.
    const row = await sql<{
      rowid: number;
      search_text: string;
    }>`select rowid, search_text from option_products
      where product_id = 'BIG-0333'`.execute(ctx.db);
    const [stored] = row.rows;
    assert.ok(stored);
    // The index is changed behind the API's back, which moves no bundle's stamp: each search below has a limit of
    // its own, so that none is answered from the searches' cache.
    const { total } = await search('enterprise', { limit: '97' });
    await sql`insert into option_products_search (option_products_search, rowid, search_text)
      values ('delete', ${stored.rowid}, ${stored.search_text})`.execute(ctx.db);
    try {
      assert.deepEqual((await search('big-0333', { limit: '98' })).ids, []);
      assert.equal((await search('enterprise', { limit: '98' })).total, total);
    } finally {
      await sql`insert into option_products_search (option_products_search) values ('rebuild')`.execute(
        ctx.db,
      );
    }
    assert.deepEqual((await search('big-0333', { limit: '99' })).ids, ['BIG-0333']);
  });

  test('SQLite: VACUUM keeps the index on the rows it was made for', async (t) => {
    if (ctx.dialect !== 'sqlite') return t.skip('SQLite only');
    // Gaps in the rowids, which a VACUUM free to renumber would close; ten products more keep the book over a
    // thousand entries, so that its searches still read the index.
    const more = Array.from({ length: 10 }, (_, i) => ({
      productId: productIdOf(ENTRIES + i),
      properties: {},
    }));
    expectStatus(await ctx.call('POST', productsUrl, { body: more }), 201, 'add products');
    const prices = more.map((p) => ({ productId: p.productId, currency: 'USD', standardPrice: 1 }));
    expectStatus(
      await ctx.call('PUT', `/v1/pricebooks/${bookId}/prices`, { body: prices }),
      200,
      'price them',
    );
    for (const i of [1, 2, 3, 10, 11, 400]) {
      expectStatus(await ctx.call('DELETE', `${optionUrl}/${productIdOf(i)}`), 200, 'remove a product');
    }
    const before = await sql<{ rowid: number }>`select rowid from option_products
      where product_id = 'BIG-0900'`.execute(ctx.db);
    await sql`vacuum`.execute(ctx.db);
    const after = await sql<{ rowid: number }>`select rowid from option_products
      where product_id = 'BIG-0900'`.execute(ctx.db);
    assert.deepEqual(after.rows, before.rows);
    assert.deepEqual((await search('big-0900')).ids, ['BIG-0900']);
    assert.deepEqual((await search('big-0400')).ids, []);
    assert.deepEqual((await search('big-1009')).ids, ['BIG-1009']);
    await indexInStep();
  });

  test('deleting the bundle takes its products out of the index', async () => {
    const bundleId = optionUrl.split('/')[3];
    expectStatus(await ctx.call('DELETE', `/v1/bundles/${bundleId}`), 204, 'delete the bundle');
    await indexInStep();
    if (ctx.dialect === 'sqlite') {
      const left = await sql<{ n: number }>`select count(*) as n from option_products_search
        where search_text glob '*big-09*'`.execute(ctx.db);
      assert.equal(left.rows[0]?.n, 0);
    }
  });
});
