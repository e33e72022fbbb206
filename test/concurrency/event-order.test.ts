import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { ok } from '../helpers/quotes.ts';

// A consumer of GET /v1/events keeps the last id it has seen and asks for what follows. Writes through two instances
// record events concurrently (on PostgreSQL in parallel transactions); however their commits interleave with its
// reads, the consumer must end up with every event once, in ascending order: no event may commit behind its cursor.
describeEachDatabase('the event feed under concurrent writers', (ctx) => {
  let other: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    other = await otherInstance(ctx);
  });

  after(async () => {
    await other?.close();
  });

  test('a consumer tailing the feed while 160 writes commit through two instances sees every event once', async () => {
    const key = await ctx.newKey('tailing');
    const through = (i: number) => (i % 2 === 0 ? ctx.call : other.call);
    let writing = true;
    const seen: string[] = [];
    let cursor: string | undefined;
    const pageAfter = async (call: typeof ctx.call, after: string | undefined) => {
      const query: Record<string, string> = { limit: '100' };
      if (after !== undefined) query.after = after;
      return ok(await call('GET', '/v1/events', { key, query }), 200);
    };
    const readOnce = async () => {
      const page = await pageAfter(through(seen.length), cursor);
      for (const event of page.events) seen.push(event.id);
      cursor = seen.at(-1) ?? cursor;
      return page.events.length;
    };
    const tail = (async () => {
      // A turn of the event loop between reads: on SQLite a read can finish without one, and starve the writers.
      while (writing) {
        await readOnce();
        await new Promise(setImmediate);
      }
      while ((await readOnce()) > 0);
    })();
    // Four writers at a time (few connections: the files beside this one use the same server), each a bundle
    // created and then renamed: two events, two transactions.
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 20; i++) {
        const call = through(w + i);
        const body = {
          header: { productId: `HDR-${w}-${i}`, properties: { name: 'Header' } },
          isActive: true,
        };
        const bundle = ok(await call('POST', '/v1/bundles', { key, body }), 201);
        ok(
          await call('PATCH', `/v1/bundles/${bundle.id}`, {
            key,
            body: { header: { productId: `HDR-${w}-${i}`, properties: { name: 'Renamed' } } },
            headers: { 'if-match': '*' },
          }),
          200,
        );
      }
    });
    await Promise.all(writers).finally(() => {
      writing = false;
    });
    await tail;

    const all: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await pageAfter(ctx.call, after);
      all.push(...page.events.map((event: { id: string }) => event.id));
      if (page.nextKey === undefined) break;
      after = page.nextKey;
    }
    assert.equal(all.length, 160);
    assert.deepEqual([...all].sort(), all, 'the feed ascends by id');
    assert.deepEqual(seen, all, 'the consumer saw every event once, in order');
  });
});
