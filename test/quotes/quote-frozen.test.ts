import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { documentOf, ok, pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

/** Everything an open quote shows: its record, its ETag, and both documents' bytes. */
async function everythingShown(ctx: TestContext, quoteId: string) {
  const read = await ctx.call('GET', `/v1/quotes/${quoteId}`);
  return {
    record: ok(read, 200),
    etag: read.headers.etag,
    html: (await documentOf(ctx, quoteId)).bytes.toString('utf8'),
    pdf: (await documentOf(ctx, quoteId, 'application/pdf')).bytes.toString('base64'),
  };
}

// Finalized means frozen: whatever happens to the catalogue afterwards, an open quote and its document show exactly
// what they showed when it was finalized, while a draft of the same configuration follows the catalogue.
describeEachDatabase('a finalized quote is frozen', (ctx) => {
  test('a price change, a rule change and the bundle’s deletion change nothing an open quote shows', async () => {
    const { bundle, base, extras, configuration } = await pricedBundle(ctx);
    const body = {
      currency: 'USD',
      customer: { name: 'Ada Lovelace' },
      bundles: [configuration({ extras: [{ productId: 'EXTRA-SETUP', quantity: 1 }] })],
    };
    const open = ok(await ctx.call('POST', '/v1/quotes', { body }), 201);
    ok(await ctx.call('POST', `/v1/quotes/${open.id}/submit`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${open.id}/finalize`), 200);
    const draft = ok(await ctx.call('POST', '/v1/quotes', { body }), 201);
    const before = await everythingShown(ctx, open.id);
    assert.equal(before.record.total, 275);
    assert.ok(before.html.includes('Small base'));

    // The price of the base doubles, and the base product is renamed.
    ok(
      await ctx.call('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, {
        body: [{ productId: 'BASE-S', currency: 'USD', listPrice: 200 }],
      }),
      200,
    );
    ok(
      await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/BASE-S`, {
        body: { properties: { name: 'Renamed base' } },
      }),
      200,
    );
    assert.deepEqual(await everythingShown(ctx, open.id), before);
    const repriced = ok(await ctx.call('POST', `/v1/quotes/${draft.id}/reprice`), 200);
    assert.equal(repriced.total, 475);
    assert.equal(repriced.lines[0].productName, 'Renamed base');

    // A rule the configuration breaks.
    ok(
      await ctx.call('POST', `/v1/bundles/${bundle.id}/rules`, {
        body: {
          name: 'Setup needs the warranty',
          kind: 'requires',
          when: { optionId: extras.id, productId: 'EXTRA-SETUP' },
          then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
        },
      }),
      201,
    );
    assert.deepEqual(await everythingShown(ctx, open.id), before);
    const broken = ok(await ctx.call('POST', `/v1/quotes/${draft.id}/reprice`), 200);
    assert.deepEqual(
      broken.violations.map((v: Json) => v.code),
      ['rule_violated'],
    );

    // The bundle goes, and its options, products and price books with it.
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}`)).status, 204);
    assert.deepEqual(await everythingShown(ctx, open.id), before);
    const orphan = ok(await ctx.call('POST', `/v1/quotes/${draft.id}/reprice`), 200);
    assert.deepEqual(
      orphan.violations.map((v: Json) => v.code),
      ['unknown_reference'],
    );
    assert.deepEqual(orphan.lines, []);

    // The open quote still goes through its lifecycle, from what it holds.
    const accepted = ok(await ctx.call('POST', `/v1/quotes/${open.id}/accept`), 200);
    assert.deepEqual(accepted.lines, before.record.lines);
    assert.equal(accepted.total, 275);
  });
});
