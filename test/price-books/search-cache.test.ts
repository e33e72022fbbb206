import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// A is the context's app; B a second app with its own connection to the same database, as a second process would
// be, its statements counted; C has the caches off, the truth each answer of B is held to.
describeEachDatabase('price book search cache across instances', (ctx) => {
  let other: Awaited<ReturnType<typeof otherInstance>>;
  let uncached: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    other = await otherInstance(ctx);
    uncached = await otherInstance(ctx, { detailsCacheBytes: 0 });
  });

  after(async () => {
    await other?.close();
    await uncached?.close();
  });

  async function write(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
    const result = await ctx.call(method, url, body === undefined ? {} : { body });
    assert.ok(result.status < 300, `${method} ${url}: ${result.status} ${result.text}`);
    return result.body;
  }

  test('B answers a search again from its cache, and every write through A that changes it shows at once', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    const book = `/v1/pricebooks/${base.priceBookId}`;
    await write('PUT', `${book}/prices`, [
      { productId: 'BASE-S', currency: 'USD', standardPrice: 10, adjustment: { type: 'percent', amount: 5 } },
      { productId: 'BASE-L', currency: 'EUR', listPrice: 20 },
    ]);
    const url = `${book}/pricedProducts`;
    const queries: Record<string, string>[] = [
      {},
      { q: 'base' },
      { currency: 'EUR', limit: '1', offset: '1' },
    ];
    const readB = async (query: Record<string, string>) => {
      other.counted.take();
      const result = await other.call('GET', url, { query });
      return { ...result, queries: other.counted.take() };
    };
    const truth = async (query: Record<string, string>) => {
      const result = await uncached.call('GET', url, { query });
      return { status: result.status, text: result.text, etag: result.headers.etag };
    };
    const held = new Map<string, string>();
    for (const query of queries) {
      const first = await readB(query);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.text, (await truth(query)).text);
      assert.equal(first.headers.etag, (await truth(query)).etag, 'the same ETag as an answer not kept');
      const hit = await readB(query);
      assert.equal(hit.queries, 1, 'a hit is one statement: the stamp, with the key');
      assert.equal(hit.text, first.text);
      assert.equal(hit.headers.etag, first.headers.etag);
      const notModified = await other.call('GET', url, {
        query,
        headers: { 'if-none-match': first.headers.etag as string },
      });
      assert.equal(notModified.status, 304);
      held.set(JSON.stringify(query), first.text);
    }

    const baseUrl = `/v1/bundles/${bundle.id}/options/${base.id}`;
    const writes: [string, () => Promise<unknown>][] = [
      [
        'prices',
        () => write('PUT', `${book}/prices`, [{ productId: 'BASE-S', currency: 'USD', standardPrice: 11 }]),
      ],
      [
        'adjustment',
        () =>
          write('PUT', `${book}/products/BASE-L/adjustment?currency=EUR`, {
            adjustment: { type: 'override', amount: 7 },
          }),
      ],
      [
        'product added and priced',
        async () => {
          await write('POST', `${baseUrl}/products`, [
            { productId: 'BASE-AAA', properties: { tier: 'base' } },
          ]);
          return write('PUT', `${book}/prices`, [
            { productId: 'BASE-AAA', currency: 'EUR', standardPrice: 1 },
          ]);
        },
      ],
      [
        'product changed',
        () => write('PUT', `${baseUrl}/products/BASE-AAA`, { properties: { tier: 'gold' } }),
      ],
      ['entries removed', () => write('DELETE', `${book}/prices`, ['BASE-L'])],
      ['book deleted', () => write('DELETE', book)],
    ];
    for (const [what, change] of writes) {
      await change();
      for (const query of queries) {
        const expected = await truth(query);
        const after = await readB(query);
        assert.equal(after.status, 200, `${what}: ${after.text}`);
        assert.equal(after.text, expected.text, what);
        assert.equal(after.headers.etag, expected.etag, what);
        assert.equal((await readB(query)).queries, 1, `${what}: the new answer is cached in turn`);
      }
      const all = (await readB({})).text;
      assert.notEqual(all, held.get('{}'), `${what} changes the answer`);
      held.set('{}', all);
    }

    // A write to another option of the bundle moves the same stamp: the answer is made again, and is the same.
    await write('PUT', `/v1/pricebooks/${extras.priceBookId}/prices`, [
      { productId: 'EXTRA-WARRANTY', currency: 'USD', standardPrice: 99 },
    ]);
    const remade = await readB({});
    assert.equal(remade.queries, 2, 'the stamp, then the search');
    assert.equal(remade.text, held.get('{}'));
    // A write in another bundle leaves it as it is, and cached.
    const elsewhere = await createBundle(ctx);
    await write('PUT', `/v1/pricebooks/${elsewhere.options[0].priceBookId}/prices`, [
      { productId: 'BASE-S', currency: 'USD', standardPrice: 1 },
    ]);
    assert.equal((await readB({})).queries, 1);

    await write('DELETE', `/v1/bundles/${bundle.id}`);
    const gone = await readB({});
    assert.equal(gone.status, 404, gone.text);
    assert.equal((await truth({})).status, 404);
  });
});
