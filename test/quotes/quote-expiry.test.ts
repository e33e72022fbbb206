import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '../../src/db/connect.ts';
import { recordQuoteExpiries } from '../../src/quotes/quote-expiry.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { ok, pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

const DAY = 86_400_000;

describeEachDatabase('quote.expired, recorded once by the sweep', (ctx) => {
  /** A quote taken to open through the API, expiring `days` after now unless it says otherwise. */
  async function openQuote(expiresAt: string): Promise<Json> {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: { currency: 'USD', expiresAt, bundles: [configuration()] },
      }),
      201,
    );
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    return ok(await ctx.call('POST', `/v1/quotes/${q.id}/finalize`), 200);
  }

  const expiredEvents = async (quoteId: string): Promise<Json[]> => {
    const page = ok(
      await ctx.call('GET', '/v1/events', { query: { types: 'quote.expired', limit: '100' } }),
      200,
    );
    return page.events.filter((e: Json) => e.data.object.id === quoteId);
  };

  test('sweeps racing on two connections record one event per expired quote, none for the others', async () => {
    const soon = await openQuote(new Date(Date.now() + 2 * DAY).toISOString());
    const later = await openQuote(new Date(Date.now() + 20 * DAY).toISOString());
    const accepted = await openQuote(new Date(Date.now() + 2 * DAY).toISOString());
    ok(await ctx.call('POST', `/v1/quotes/${accepted.id}/accept`), 200);
    const before = await ctx.call('GET', `/v1/quotes/${soon.id}`);

    const other = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
    try {
      const at = new Date(Date.now() + 3 * DAY);
      const swept = await Promise.all([
        recordQuoteExpiries(ctx.db, at),
        recordQuoteExpiries(other.db, at),
        recordQuoteExpiries(ctx.db, at),
        recordQuoteExpiries(other.db, at),
      ]);
      assert.equal(
        swept.reduce((a, b) => a + b, 0),
        1,
      );
      assert.equal(await recordQuoteExpiries(other.db, at), 0, 'a second sweep finds nothing left');
    } finally {
      await other.db.destroy();
    }

    const [event, ...more] = await expiredEvents(soon.id);
    assert.equal(more.length, 0);
    assert.equal(event.data.object.status, 'expired');
    assert.equal(event.data.object.number, soon.number);
    assert.deepEqual(await expiredEvents(later.id), []);
    assert.deepEqual(await expiredEvents(accepted.id), []);
    // The row moved: its ETag is a new one, so no client holds the open quote's as current.
    const read = await ctx.call('GET', `/v1/quotes/${soon.id}`);
    assert.notEqual(read.headers.etag, before.headers.etag);
    assert.equal(ok(read, 200).status, 'open', 'not yet expired by the clock this read uses');
  });

  test('a sweep before expiresAt records nothing, and an expired quote can still be revised', async () => {
    const q = await openQuote(new Date(Date.now() + 1500).toISOString());
    assert.equal(await recordQuoteExpiries(ctx.db), 0);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(q.expiresAt) - Date.now() + 50));
    assert.equal(await recordQuoteExpiries(ctx.db), 1);
    assert.equal((await expiredEvents(q.id)).length, 1);
    assert.equal(ok(await ctx.call('GET', `/v1/quotes/${q.id}`), 200).status, 'expired');
    assert.equal(ok(await ctx.call('POST', `/v1/quotes/${q.id}/revise`), 201).version, 2);
  });
});
