import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import * as quoteLineUnitPriceFlag from '../../src/db/migrations/0017_quote_line_unit_price_flag.ts';
import { assertProblem, describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { ok, pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

const quoteId = /^quo_[0-9A-HJKMNP-TV-Z]{26}$/;

async function eventsOfTypes(ctx: TestContext, types: string): Promise<Json[]> {
  const all: Json[] = [];
  let after: string | undefined;
  for (;;) {
    const query: Record<string, string> = { limit: '100', types };
    if (after) query.after = after;
    const page = ok(await ctx.call('GET', '/v1/events', { query }), 200);
    all.push(...page.events);
    if (!page.nextKey) return all;
    after = page.nextKey;
  }
}

describeEachDatabase('quotes as records', (ctx) => {
  test('POST saves a priced draft with a number; GET, list, PUT, PATCH and DELETE work on it', async () => {
    const { configuration } = await pricedBundle(ctx);
    const body = {
      currency: 'USD',
      title: 'Office refit',
      customer: { id: 'crm-42', name: 'Ada & Co', email: 'ada@example.com' },
      bundles: [
        configuration({
          base: [{ productId: 'BASE-L', quantity: 3, unitPrice: 200.125, discountPercent: 10 }],
          extras: [
            { productId: 'EXTRA-WARRANTY', quantity: 3, discountPercent: 12.5 },
            { productId: 'EXTRA-SETUP', quantity: 1 },
          ],
        }),
      ],
    };
    const created = await ctx.call('POST', '/v1/quotes', { body });
    const quote = ok(created, 201, 'create');
    assert.match(quote.id, quoteId);
    assert.equal(created.headers.location, `/v1/quotes/${quote.id}`);
    assert.equal(created.headers.etag, `"${quote.id}:1"`);
    assert.match(quote.number, /^Q-\d{6}$/);
    assert.equal(quote.version, 1);
    assert.equal(quote.status, 'draft');
    assert.deepEqual(quote.customer, body.customer);
    assert.deepEqual(quote.violations, []);
    assert.deepEqual(quote.approvals, []);
    // The bundle's quantity comes back with its default filled in.
    assert.deepEqual(
      quote.bundles,
      body.bundles.map((b) => ({ quantity: 1, ...b })),
    );
    // 200.125 x 3 = 600.375, less 10% = 540.3375 -> 540.34; list 250.5 x 3 = 751.50.
    // 19.99 x 3 = 59.97, less 12.5% = 52.47375 -> 52.47. 75 x 1 = 75.
    assert.deepEqual(
      quote.lines.map((l: Json) => [
        l.bundleIndex,
        l.optionName,
        l.productId,
        l.productName,
        l.quantity,
        l.unitPrice,
        l.discountPercent,
        l.listTotal,
        l.total,
      ]),
      [
        [0, 'Base', 'BASE-L', null, 3, 200.125, 10, 751.5, 540.34],
        [0, 'Extras', 'EXTRA-WARRANTY', null, 3, 19.99, 12.5, 59.97, 52.47],
        [0, 'Extras', 'EXTRA-SETUP', null, 1, 75, 0, 75, 75],
      ],
    );
    assert.equal(quote.lines[0].bundleName, 'Workstation <Pro>');
    assert.equal(quote.lines[0].trace.unitPriceEdited, true);
    // Each line says whether a rep may set its unit price, whether or not its entry has an adjustment.
    assert.deepEqual(
      quote.lines.map((l: Json) => [l.productId, l.adjustment, l.allowUnitPriceEditing]),
      [
        ['BASE-L', null, true],
        ['EXTRA-WARRANTY', null, false],
        ['EXTRA-SETUP', null, false],
      ],
    );
    assert.equal(quote.listTotal, 886.47);
    assert.equal(quote.total, 667.81);
    assert.equal(quote.discountTotal, 218.66);

    const read = await ctx.call('GET', `/v1/quotes/${quote.id}`);
    assert.deepEqual(ok(read, 200), quote);
    assert.equal(read.headers.etag, `"${quote.id}:1"`);
    assert.equal(
      (
        await ctx.call('GET', `/v1/quotes/${quote.id}`, {
          headers: { 'if-none-match': read.headers.etag as string },
        })
      ).status,
      304,
    );

    const second = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    assert.equal(Number(second.number.slice(2)), Number(quote.number.slice(2)) + 1);
    assert.equal(second.lines[0].productName, 'Small base');
    const listed = ok(await ctx.call('GET', '/v1/quotes', { query: { limit: '1' } }), 200);
    assert.deepEqual(
      listed.quotes.map((q: Json) => q.id),
      [second.id],
    );
    const next = ok(
      await ctx.call('GET', '/v1/quotes', { query: { limit: '1', nextKey: listed.nextKey } }),
      200,
    );
    assert.equal(next.quotes[0].id, quote.id);
    const byCustomer = ok(await ctx.call('GET', '/v1/quotes', { query: { customerId: 'crm-42' } }), 200);
    assert.deepEqual(
      byCustomer.quotes.map((q: Json) => q.id),
      [quote.id],
    );
    const byText = ok(await ctx.call('GET', '/v1/quotes', { query: { q: 'ADA &' } }), 200);
    assert.deepEqual(
      byText.quotes.map((q: Json) => q.id),
      [quote.id],
    );
    const byNumber = ok(await ctx.call('GET', '/v1/quotes', { query: { number: second.number } }), 200);
    assert.deepEqual(
      byNumber.quotes.map((q: Json) => q.id),
      [second.id],
    );
    assertProblem(
      await ctx.call('GET', '/v1/quotes', { query: { nextKey: 'bogus' } }),
      400,
      'validation_failed',
    );

    assertProblem(
      await ctx.call('PATCH', `/v1/quotes/${quote.id}`, {
        body: { title: 'x' },
        headers: { 'if-match': `"${quote.id}:9"` },
      }),
      412,
      'precondition_failed',
    );
    const patched = ok(
      await ctx.call('PATCH', `/v1/quotes/${quote.id}`, {
        body: { title: 'Renamed', customer: null },
        headers: { 'if-match': `"${quote.id}:1"` },
      }),
      200,
    );
    assert.equal(patched.title, 'Renamed');
    assert.deepEqual(patched.customer, { id: null, name: null, email: null });
    assert.deepEqual(patched.lines, quote.lines);

    const replaced = await ctx.call('PUT', `/v1/quotes/${quote.id}`, {
      body: { currency: 'USD', bundles: [configuration({}, 2)] },
    });
    ok(replaced, 200);
    assert.equal(replaced.headers.etag, `"${quote.id}:3"`);
    assert.equal(replaced.body.title, null);
    assert.deepEqual(
      replaced.body.lines.map((l: Json) => [l.productId, l.quantity, l.total]),
      [['BASE-S', 4, 400]],
    );
    assert.equal(replaced.body.number, quote.number);
    assert.equal(replaced.body.version, 1);

    assertProblem(
      await ctx.call('DELETE', `/v1/quotes/${quote.id}`, { headers: { 'if-match': `"${quote.id}:1"` } }),
      412,
    );
    assert.equal((await ctx.call('DELETE', `/v1/quotes/${quote.id}`)).status, 204);
    assertProblem(await ctx.call('GET', `/v1/quotes/${quote.id}`), 404, 'not_found');
    const types = (await eventsOfTypes(ctx, 'quote.created,quote.updated,quote.deleted'))
      .filter((e) => e.data.object.id === quote.id)
      .map((e) => e.type);
    assert.deepEqual(types, ['quote.created', 'quote.updated', 'quote.updated', 'quote.deleted']);
  });

  test('a draft holds violations; submit refuses them; the lifecycle runs to accepted with its events', async () => {
    const { configuration } = await pricedBundle(ctx);
    const bad = {
      currency: 'USD',
      bundles: [
        configuration({
          base: [{ productId: 'BASE-S', quantity: 2, unitPrice: 5 }],
          extras: [{ productId: 'NOPE', quantity: 1 }],
        }),
      ],
    };
    const draft = ok(await ctx.call('POST', '/v1/quotes', { body: bad }), 201);
    assert.deepEqual(
      draft.violations.map((v: Json) => [v.code, v.pointer]),
      [
        ['unit_price_not_editable', '/bundles/0/options/0/products/0/unitPrice'],
        ['unknown_product', '/bundles/0/options/1/products/0/productId'],
      ],
    );
    assert.equal(draft.lines.length, 1);
    assert.equal(draft.lines[0].allowUnitPriceEditing, false);
    const refused = await ctx.call('POST', `/v1/quotes/${draft.id}/submit`);
    assertProblem(refused, 422, 'quote_invalid');
    assert.equal(refused.body.errors.length, 2);
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/finalize`), 422, 'quote_invalid');
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/accept`), 409, 'invalid_transition');

    const fixed = ok(
      await ctx.call('PUT', `/v1/quotes/${draft.id}`, {
        body: {
          currency: 'USD',
          bundles: [configuration({ extras: [{ productId: 'EXTRA-SETUP', quantity: 1 }] })],
        },
      }),
      200,
    );
    assert.deepEqual(fixed.violations, []);
    const submitted = await ctx.call('POST', `/v1/quotes/${draft.id}/submit`);
    assert.equal(ok(submitted, 200).status, 'approved');
    assert.ok(submitted.body.submittedAt);
    // An edit returns an approved quote to draft.
    const edited = ok(
      await ctx.call('PATCH', `/v1/quotes/${draft.id}`, { body: { notes: 'Delivery in May' } }),
      200,
    );
    assert.equal(edited.status, 'draft');
    ok(await ctx.call('POST', `/v1/quotes/${draft.id}/submit`), 200);
    const finalized = await ctx.call('POST', `/v1/quotes/${draft.id}/finalize`, {
      headers: { 'if-match': `"${draft.id}:5"` },
    });
    const open = ok(finalized, 200, 'finalize');
    assert.equal(open.status, 'open');
    assert.ok(open.finalizedAt);
    assert.equal(Date.parse(open.expiresAt) - Date.parse(open.finalizedAt), 30 * 86_400_000);
    assertProblem(await ctx.call('PUT', `/v1/quotes/${draft.id}`, { body: bad }), 409, 'invalid_transition');
    assertProblem(await ctx.call('DELETE', `/v1/quotes/${draft.id}`), 409, 'invalid_transition');
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/reprice`), 409, 'invalid_transition');
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/finalize`), 409, 'invalid_transition');
    const accepted = ok(await ctx.call('POST', `/v1/quotes/${draft.id}/accept`), 200);
    assert.equal(accepted.status, 'accepted');
    assert.ok(accepted.acceptedAt);
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/cancel`), 409, 'invalid_transition');
    assertProblem(await ctx.call('POST', `/v1/quotes/${draft.id}/revise`), 409, 'invalid_transition');
    const types = (await eventsOfTypes(ctx, 'quote.submitted,quote.approved,quote.finalized,quote.accepted'))
      .filter((e) => e.data.object.id === draft.id)
      .map((e) => e.type);
    assert.deepEqual(types, [
      'quote.submitted',
      'quote.approved',
      'quote.submitted',
      'quote.approved',
      'quote.finalized',
      'quote.accepted',
    ]);
  });

  test('revise makes the next version of the number; finalizing it supersedes the old one', async () => {
    const { configuration } = await pricedBundle(ctx);
    const v1 = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    assertProblem(await ctx.call('POST', `/v1/quotes/${v1.id}/revise`), 409, 'invalid_transition');
    ok(await ctx.call('POST', `/v1/quotes/${v1.id}/submit`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${v1.id}/finalize`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${v1.id}/decline`), 200);
    const revised = await ctx.call('POST', `/v1/quotes/${v1.id}/revise`);
    const v2 = ok(revised, 201, 'revise');
    assert.equal(revised.headers.location, `/v1/quotes/${v2.id}`);
    assert.deepEqual([v2.number, v2.version, v2.status], [v1.number, 2, 'draft']);
    assert.deepEqual(v2.bundles, v1.bundles);
    assertProblem(await ctx.call('POST', `/v1/quotes/${v1.id}/revise`), 409, 'invalid_transition');
    ok(await ctx.call('POST', `/v1/quotes/${v2.id}/submit`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${v2.id}/finalize`), 200);
    assert.equal(ok(await ctx.call('GET', `/v1/quotes/${v1.id}`), 200).status, 'superseded');
    const versions = ok(await ctx.call('GET', '/v1/quotes', { query: { number: v1.number } }), 200);
    assert.deepEqual(
      versions.quotes.map((q: Json) => [q.version, q.status]),
      [
        [2, 'open'],
        [1, 'superseded'],
      ],
    );
    const expiredQuery = ok(
      await ctx.call('GET', '/v1/quotes', { query: { status: 'open', number: v1.number } }),
      200,
    );
    assert.equal(expiredQuery.quotes.length, 1);
  });

  test('an open quote past expiresAt reads as expired, cannot be accepted, and can be revised', async () => {
    const { configuration } = await pricedBundle(ctx);
    const soon = new Date(Date.now() + 1500).toISOString();
    const q = ok(
      await ctx.call('POST', '/v1/quotes', {
        body: { currency: 'USD', expiresAt: soon, bundles: [configuration()] },
      }),
      201,
    );
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/submit`), 200);
    ok(await ctx.call('POST', `/v1/quotes/${q.id}/finalize`), 200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 50));
    assert.equal(ok(await ctx.call('GET', `/v1/quotes/${q.id}`), 200).status, 'expired');
    const listed = ok(await ctx.call('GET', '/v1/quotes', { query: { status: 'expired' } }), 200);
    assert.ok(listed.quotes.some((x: Json) => x.id === q.id));
    assertProblem(await ctx.call('POST', `/v1/quotes/${q.id}/accept`), 409, 'invalid_transition');
    assert.equal(ok(await ctx.call('POST', `/v1/quotes/${q.id}/revise`), 201).version, 2);
  });

  test('a line saved before lines said whether a rep may set its unit price reads as not allowing it', async () => {
    const { configuration } = await pricedBundle(ctx);
    const body = {
      currency: 'USD',
      bundles: [configuration({ base: [{ productId: 'BASE-L', quantity: 1 }] })],
    };
    const saved = ok(await ctx.call('POST', '/v1/quotes', { body }), 201);
    assert.equal(saved.lines[0].allowUnitPriceEditing, true);
    const { lines_json } = await ctx.db
      .selectFrom('quotes')
      .select('lines_json')
      .where('id', '=', saved.id)
      .executeTakeFirstOrThrow();
    const before = (JSON.parse(lines_json) as Json[]).map(({ allowUnitPriceEditing: _, ...line }) => line);
    await ctx.db
      .updateTable('quotes')
      .set({ lines_json: JSON.stringify(before), version: saved.version + 1 })
      .where('id', '=', saved.id)
      .execute();
    await quoteLineUnitPriceFlag.up(ctx.db as Kysely<unknown>);
    const read = ok(await ctx.call('GET', `/v1/quotes/${saved.id}`), 200);
    assert.deepEqual(
      read.lines.map((line: Json) => line.allowUnitPriceEditing),
      [false],
    );
  });

  test('bad input: 400 with pointers for single fields, 404 across accounts, 403 for read-only keys', async () => {
    const { configuration } = await pricedBundle(ctx);
    const bad = await ctx.call('POST', '/v1/quotes', {
      body: {
        currency: 'USD',
        bundles: [configuration({ base: [{ productId: 'BASE-S', quantity: 2, discountPercent: 10.005 }] })],
      },
    });
    assertProblem(bad, 400, 'validation_failed');
    assert.deepEqual(
      bad.body.errors.map((e: Json) => e.pointer),
      ['/bundles/0/options/0/products/0/discountPercent'],
    );
    const over = await ctx.call('POST', '/v1/quotes', {
      body: {
        currency: 'USD',
        bundles: [configuration({ base: [{ productId: 'BASE-S', quantity: 2, discountPercent: 101 }] })],
      },
    });
    assertProblem(over, 400, 'validation_failed');
    assertProblem(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'XYZ', bundles: [configuration()] } }),
      400,
    );

    const q = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    const other = await ctx.newKey('globex');
    assertProblem(await ctx.call('GET', `/v1/quotes/${q.id}`, { key: other }), 404, 'not_found');
    assertProblem(await ctx.call('GET', `/v1/quotes/${q.id}/document`, { key: other }), 404, 'not_found');
    assertProblem(await ctx.call('POST', `/v1/quotes/${q.id}/submit`, { key: other }), 404, 'not_found');
    assertProblem(await ctx.call('DELETE', `/v1/quotes/${q.id}`, { key: other }), 404, 'not_found');
    assert.deepEqual(ok(await ctx.call('GET', '/v1/quotes', { key: other }), 200).quotes, []);
    // Another account's bundle is, to this account, a bundle that does not exist: a body naming it is refused.
    const theirs = await ctx.call('POST', '/v1/quotes', {
      key: other,
      body: { currency: 'USD', bundles: [configuration()] },
    });
    assertProblem(theirs, 422, 'unknown_reference');
    assert.deepEqual(
      theirs.body.errors.map((v: Json) => v.pointer),
      ['/bundles/0/bundleId'],
    );
    assertProblem(
      await ctx.call('PUT', `/v1/quotes/${q.id}`, {
        body: { currency: 'USD', bundles: [{ ...configuration(), bundleId: 'bnd_none' }] },
      }),
      422,
      'unknown_reference',
    );

    const reader = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('GET', `/v1/quotes/${q.id}`, { key: reader })).status, 200);
    assert.equal((await ctx.call('GET', `/v1/quotes/${q.id}/document`, { key: reader })).status, 200);
    assertProblem(
      await ctx.call('POST', '/v1/quotes', {
        key: reader,
        body: { currency: 'USD', bundles: [configuration()] },
      }),
      403,
    );
    assertProblem(await ctx.call('POST', `/v1/quotes/${q.id}/submit`, { key: reader }), 403, 'forbidden');
    assertProblem(await ctx.call('PATCH', `/v1/quotes/${q.id}`, { key: reader, body: { title: 'x' } }), 403);
  });

  test('an If-Match that names no version of the quote is a 412 on every write, the quote untouched', async () => {
    const { configuration } = await pricedBundle(ctx);
    const q = ok(
      await ctx.call('POST', '/v1/quotes', { body: { currency: 'USD', bundles: [configuration()] } }),
      201,
    );
    const headers = { 'if-match': '"bnd_other:1", W/"x"' };
    for (const [method, path] of [
      ['DELETE', ''],
      ['POST', '/submit'],
      ['POST', '/cancel'],
      ['POST', '/reprice'],
    ] as const) {
      assertProblem(
        await ctx.call(method, `/v1/quotes/${q.id}${path}`, { headers }),
        412,
        'precondition_failed',
      );
    }
    assertProblem(await ctx.call('PATCH', `/v1/quotes/${q.id}`, { headers, body: { title: 'x' } }), 412);
    assert.deepEqual(ok(await ctx.call('GET', `/v1/quotes/${q.id}`), 200), q);
  });

  test('Idempotency-Key replays a create and an action', async () => {
    const { configuration } = await pricedBundle(ctx);
    const body = { currency: 'USD', bundles: [configuration()] };
    const headers = { 'idempotency-key': `quote-${ctx.dialect}-${Date.now()}` };
    const first = ok(await ctx.call('POST', '/v1/quotes', { body, headers }), 201);
    const again = await ctx.call('POST', '/v1/quotes', { body, headers });
    assert.deepEqual(ok(again, 201), first);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const submitKey = { 'idempotency-key': `submit-${first.id}` };
    const submitted = ok(
      await ctx.call('POST', `/v1/quotes/${first.id}/submit`, { headers: submitKey }),
      200,
    );
    assert.deepEqual(
      ok(await ctx.call('POST', `/v1/quotes/${first.id}/submit`, { headers: submitKey }), 200),
      submitted,
    );
  });
});
