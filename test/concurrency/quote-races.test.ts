import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CallResult, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { ok, pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read freely
type Json = any;

// Two instances on one database, as two processes would be: each transition is one compare-and-set, so of any
// number of racing transitions on one quote exactly one wins and records its event; the rest are refused whole.
describeEachDatabase('quote transitions and numbers under races', (ctx) => {
  let other: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    other = await otherInstance(ctx);
  });

  after(async () => {
    await other?.close();
  });

  async function openQuote(configuration: () => Json): Promise<Json> {
    const q = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    return ok(await ctx.call('POST', `/v1/quotes/${q.id}/finalize`), 200);
  }

  async function eventsOf(quoteId: string): Promise<string[]> {
    const types = 'quote.accepted,quote.canceled,quote.finalized,quote.declined';
    const page = ok(await ctx.call('GET', '/v1/events', { query: { types, limit: '100' } }), 200);
    assert.equal(page.nextKey, undefined);
    return page.events.filter((e: Json) => e.data.object.id === quoteId).map((e: Json) => e.type);
  }

  test('20 accepts and cancels racing on one open quote: exactly one wins, once, every round', async () => {
    const { configuration } = await pricedBundle(ctx);
    for (let round = 0; round < 3; round++) {
      const q = await openQuote(configuration);
      const racers = Array.from({ length: 20 }, (_, i) => {
        const action = i % 2 === 0 ? 'accept' : 'cancel';
        const call = i % 4 < 2 ? ctx.call : other.call;
        return call('POST', `/v1/quotes/${q.id}/${action}`).then((result: CallResult) => ({
          action,
          result,
        }));
      });
      const outcomes = await Promise.all(racers);
      const winners = outcomes.filter((o) => o.result.status === 200);
      assert.equal(winners.length, 1, outcomes.map((o) => `${o.action} ${o.result.status}`).join(', '));
      const [winner] = winners;
      for (const loser of outcomes.filter((o) => o.result.status !== 200)) {
        assert.equal(loser.result.status, 409, loser.result.text);
        assert.equal(loser.result.body.code, 'invalid_transition');
      }
      const status = winner?.action === 'accept' ? 'accepted' : 'canceled';
      const read = ok(await ctx.call('GET', `/v1/quotes/${q.id}`), 200);
      assert.equal(read.status, status);
      assert.equal(read.acceptedAt !== null, status === 'accepted');
      assert.equal(read.canceledAt !== null, status === 'canceled');
      assert.deepEqual(await eventsOf(q.id), [
        'quote.finalized',
        `quote.${winner?.action === 'accept' ? 'accepted' : 'canceled'}`,
      ]);
    }
  });

  test('ten finalizes racing on one approved quote: one finalizes it, the rest get 409', async () => {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? ctx : other).call('POST', `/v1/quotes/${q.id}/finalize`)),
    );
    assert.deepEqual(
      results.map((r) => r.status).sort(),
      [200, ...Array(9).fill(409)],
      results.map((r) => r.text.slice(0, 120)).join('\n'),
    );
    assert.deepEqual(await eventsOf(q.id), ['quote.finalized']);
  });

  test('quote numbers stay unique and gapless under concurrent creates through two instances', async () => {
    const { configuration } = await pricedBundle(ctx);
    const body = { currency: 'USD', bundles: [configuration()] };
    const first = ok(await ctx.call('POST', '/v1/quotes', { body }), 201);
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? ctx : other).call('POST', '/v1/quotes', { body })),
    );
    const numbers = created.map((r) => Number(ok(r, 201).number.slice(2))).sort((a, b) => a - b);
    const start = Number(first.number.slice(2));
    assert.deepEqual(
      numbers,
      Array.from({ length: 30 }, (_, i) => start + 1 + i),
    );
  });
});
