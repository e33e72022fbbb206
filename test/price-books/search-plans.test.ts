// A price book search runs on PostgreSQL as a prepared statement, planned once per connection, while its book is
// small, and is planned for each search once the book is larger (src/price-books/price-books.repository.ts,
// ENTRIES_FOR_ONE_PLAN). These check that the answers are the same either way, as a book grows past that size and
// shrinks back, and which way each search ran.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompiledQuery } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { searchEntries } from '../../src/price-books/price-books.repository.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

/** `db`, noting the text of each statement run through it. */
function noting(db: Db): { db: Db; texts: string[] } {
  const texts: string[] = [];
  const executeQuery = (query: CompiledQuery) => {
    texts.push(query.sql);
    return db.executeQuery(query);
  };
  const spy = new Proxy(db, {
    get: (target, property) => {
      if (property === 'executeQuery') return executeQuery;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: spy, texts };
}

describeEachDatabase('price book search plans', (ctx) => {
  test('a book searched as it grows past the size planned once and shrinks back answers the same', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: [{ name: 'Many', products: [{ productId: 'P-0000', properties: { tier: 'gold' } }] }],
    });
    const [option] = options;
    const products = `/v1/bundles/${bundle.id}/options/${option.id}/products`;
    const prices = `/v1/pricebooks/${option.priceBookId}/prices`;
    const name = (i: number) => `P-${String(i).padStart(4, '0')}`;
    const price = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        productId: name(from + i),
        currency: 'USD',
        standardPrice: from + i,
      }));
    const add = async (from: number, to: number) => {
      const body = Array.from({ length: to - from }, (_, i) => ({
        productId: name(from + i),
        properties: { tier: (from + i) % 3 === 0 ? 'gold' : 'silver' },
      }));
      assert.equal((await ctx.call('POST', products, { body })).status, 201);
      assert.equal((await ctx.call('PUT', prices, { body: price(from, to) })).status, 200);
    };
    await add(1, 100);
    assert.equal((await ctx.call('PUT', prices, { body: price(0, 1) })).status, 200);

    const account = (await ctx.call('GET', '/v1/keys/current')).body;
    const noted = noting(ctx.db);
    const search = async (q: string, offset = 0) => {
      const { keyLive, page } = await searchEntries(noted.db, 'acme', account.keyId, option.priceBookId, {
        q,
        currency: undefined,
        limit: 5,
        offset,
      });
      assert.ok(keyLive);
      return { total: page?.total, ids: page?.results.map((r) => r.productId) };
    };
    const preparedRuns = () => noted.texts.splice(0).map((text) => text.startsWith('/* prepared */'));

    // Small: the first search plans (nothing is known of the book yet), the next ones run the prepared statement.
    assert.deepEqual(await search('gold'), {
      total: 34,
      ids: ['P-0000', 'P-0003', 'P-0006', 'P-0009', 'P-0012'],
    });
    assert.deepEqual(await search('p-0042'), { total: 1, ids: ['P-0042'] });
    assert.deepEqual(await search('gold', 30), { total: 34, ids: ['P-0090', 'P-0093', 'P-0096', 'P-0099'] });
    assert.deepEqual(
      preparedRuns(),
      ctx.dialect === 'postgres' ? [false, true, true] : [false, false, false],
    );

    // Past ENTRIES_FOR_ONE_PLAN (1,000): the first search after the book grew still ran prepared; it saw the size.
    await add(100, 600);
    await add(600, 1100);
    await add(1100, 1200);
    assert.deepEqual(await search('p-1142'), { total: 1, ids: ['P-1142'] });
    assert.deepEqual(await search('p-1143'), { total: 1, ids: ['P-1143'] });
    assert.deepEqual(await search('gold', 396), {
      total: 400,
      ids: ['P-1188', 'P-1191', 'P-1194', 'P-1197'],
    });
    assert.deepEqual(await search(''), {
      total: 1200,
      ids: ['P-0000', 'P-0001', 'P-0002', 'P-0003', 'P-0004'],
    });
    assert.deepEqual(
      preparedRuns(),
      ctx.dialect === 'postgres' ? [true, false, false, false] : [false, false, false, false],
    );

    // Shrunk back: prepared again after one search that saw it.
    const removed = Array.from({ length: 1150 }, (_, i) => name(i + 50));
    assert.equal((await ctx.call('DELETE', prices, { body: removed.slice(0, 1000) })).status, 200);
    assert.equal((await ctx.call('DELETE', prices, { body: removed.slice(1000) })).status, 200);
    assert.deepEqual(await search('gold', 15), { total: 17, ids: ['P-0045', 'P-0048'] });
    assert.deepEqual(await search('gold', 15), { total: 17, ids: ['P-0045', 'P-0048'] });
    assert.deepEqual(preparedRuns(), ctx.dialect === 'postgres' ? [false, true] : [false, false]);
  });
});
