import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBundle as createBundleOutsideHttp } from '../../src/bundles/bundles.service.ts';
import { insertEvents } from '../../src/events/events.repository.ts';
import { PURGE_BATCH, purgeExpiredEvents } from '../../src/events/events.service.ts';
import { newId } from '../../src/ids.ts';
import { scopeOutsideHttp } from '../../src/shared/scope.ts';
import { type OpenApiDocument, operationsOf } from '../fuzz/openapi.ts';
import { assertProblem, type CallResult, describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { pricedBundle } from '../helpers/quotes.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

/** Every event of the account after `after`, read through the feed a page at a time. */
async function feed(ctx: TestContext, after?: string, key = ctx.key): Promise<Json[]> {
  const events: Json[] = [];
  let cursor = after;
  for (;;) {
    const query: Record<string, string> = { limit: '100' };
    if (cursor) query.after = cursor;
    const page = await ctx.call('GET', '/v1/events', { query, key });
    assert.equal(page.status, 200, page.text);
    events.push(...page.body.events);
    if (!page.body.nextKey) return events;
    cursor = page.body.nextKey;
  }
}

async function lastEventId(ctx: TestContext): Promise<string | undefined> {
  return (await feed(ctx)).at(-1)?.id;
}

describeEachDatabase('events', (ctx) => {
  /**
   * Runs a write made with `key` and answers the one event it recorded, checked against the write's answer, request
   * id and key.
   */
  async function onlyEvent(
    write: () => Promise<CallResult>,
    status: number,
    type: string,
    key = ctx.key,
  ): Promise<Json> {
    const before = await lastEventId(ctx);
    const result = await write();
    assert.equal(result.status, status, result.text);
    const events = await feed(ctx, before);
    assert.equal(events.length, 1, JSON.stringify(events));
    const [event] = events;
    assert.equal(event.type, type);
    assert.equal(event.accountId, 'acme');
    assert.equal(event.requestId, result.headers['x-request-id']);
    assert.equal(event.keyId, (await ctx.call('GET', '/v1/keys/current', { key })).body.keyId);
    assert.match(event.id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual((await ctx.call('GET', `/v1/events/${event.id}`)).body, event);
    return event.data.object;
  }

  test('every write route records its event, with the resource after the write, the request id and the key', async () => {
    // Every write the test makes, to check below that no write operation of the API was left out.
    const called: string[] = [];
    let result: CallResult | undefined;
    const call =
      (method: string, url: string, body?: unknown, query?: Record<string, string>) => async () => {
        called.push(`${method} ${url}`);
        result = await ctx.call(method as 'GET', url, { body, query });
        return result;
      };
    const bundle = await onlyEvent(
      call('POST', '/v1/bundles', { header: { productId: 'EV-1', properties: {} } }),
      201,
      'bundle.created',
    );
    assert.equal(bundle.header.productId, 'EV-1');
    const b = `/v1/bundles/${bundle.id}`;
    const updated = await onlyEvent(call('PATCH', b, { isActive: false }), 200, 'bundle.updated');
    assert.deepEqual(updated, result?.body);

    const cloned = await onlyEvent(call('POST', `${b}/clone`, {}), 201, 'bundle.cloned');
    assert.deepEqual(cloned, result?.body);
    assert.deepEqual(await onlyEvent(call('DELETE', `/v1/bundles/${cloned.id}`), 204, 'bundle.deleted'), {
      id: cloned.id,
      deleted: true,
    });

    const option = await onlyEvent(
      call('POST', `${b}/options`, { name: 'Size', type: 'INCLUDED', products: [{ productId: 'S' }] }),
      201,
      'option.created',
    );
    assert.deepEqual(option, result?.body);
    const o = `${b}/options/${option.id}`;
    assert.deepEqual(await onlyEvent(call('PUT', o, { name: 'Sizes' }), 200, 'option.updated'), result?.body);
    const optionCopy = await onlyEvent(call('POST', `${o}/clone`), 201, 'option.cloned');
    assert.deepEqual(optionCopy, result?.body.option);
    assert.deepEqual(
      await onlyEvent(call('DELETE', `${b}/options/${optionCopy.id}`), 204, 'option.deleted'),
      { id: optionCopy.id, deleted: true },
    );
    const added = await onlyEvent(
      call('POST', `${o}/products`, [{ productId: 'M' }, { productId: 'L' }]),
      201,
      'option_products.changed',
    );
    assert.deepEqual(added, { id: option.id, bundleId: bundle.id, products: result?.body });
    const changed = await onlyEvent(
      call('PUT', `${o}/products/M`, { properties: { fit: 'slim' } }),
      200,
      'option_products.changed',
    );
    assert.deepEqual(
      changed.products.find((p: Json) => p.productId === 'M'),
      result?.body,
    );
    const removed = await onlyEvent(call('DELETE', `${o}/L`), 200, 'option_products.changed');
    assert.deepEqual(removed.products, result?.body);

    const ruleBody = {
      name: 'S needs M',
      kind: 'requires',
      when: { optionId: option.id, productId: 'S' },
      then: [{ optionId: option.id, productId: 'M' }],
    };
    const rule = await onlyEvent(call('POST', `${b}/rules`, ruleBody), 201, 'rule.created');
    assert.deepEqual(rule, result?.body);
    assert.deepEqual(
      await onlyEvent(
        call('PUT', `${b}/rules/${rule.id}`, { ...ruleBody, name: 'M with S' }),
        200,
        'rule.updated',
      ),
      result?.body,
    );
    assert.deepEqual(await onlyEvent(call('DELETE', `${b}/rules/${rule.id}`), 204, 'rule.deleted'), {
      id: rule.id,
      deleted: true,
    });

    const book = await onlyEvent(
      call('POST', '/v1/pricebooks', { bundleOptionId: option.id, name: 'Spring' }),
      201,
      'price_book.created',
    );
    assert.deepEqual(book, result?.body);
    const p = `/v1/pricebooks/${book.id}`;
    assert.deepEqual(
      await onlyEvent(call('PATCH', p, { description: 'for spring' }), 200, 'price_book.updated'),
      result?.body,
    );
    assert.deepEqual(
      await onlyEvent(
        call('PUT', `${p}/prices`, [
          { productId: 'S', currency: 'USD', standardPrice: 10 },
          { productId: 'S', currency: 'EUR', standardPrice: 9 },
          { productId: 'M', currency: 'USD', standardPrice: 12 },
        ]),
        200,
        'prices.changed',
      ),
      { priceBookId: book.id, productIds: ['S', 'M'], currencies: ['USD', 'EUR'] },
    );
    // A bulk change is a price write: its one event names what it changed (a preview records none, as it writes none).
    assert.deepEqual(
      await onlyEvent(
        call('POST', `${p}/prices/bulk-change`, {
          percent: 10,
          currencies: ['EUR'],
          fields: ['standardPrice'],
        }),
        200,
        'prices.changed',
      ),
      { priceBookId: book.id, productIds: ['S'], currencies: ['EUR'] },
    );
    assert.deepEqual(await onlyEvent(call('DELETE', `${p}/prices`, ['M', 'nope']), 200, 'prices.changed'), {
      priceBookId: book.id,
      productIds: ['M'],
      currencies: ['USD'],
    });
    const adjustment = { type: 'percent', amount: 5 };
    const usd = { currency: 'USD' };
    assert.deepEqual(
      await onlyEvent(
        call('PUT', `${p}/products/S/adjustment`, { adjustment }, usd),
        200,
        'adjustment.changed',
      ),
      { priceBookId: book.id, productId: 'S', currency: 'USD', adjustment: result?.body.adjustment },
    );
    assert.deepEqual(
      await onlyEvent(
        call('DELETE', `${p}/products/S/adjustment`, undefined, usd),
        204,
        'adjustment.changed',
      ),
      { priceBookId: book.id, productId: 'S', currency: 'USD', adjustment: null },
    );
    const variants = await onlyEvent(
      call('PUT', `${p}/products/S/product-variants`, {
        isDynamic: true,
        template: 'S-{fit}',
        properties: [{ name: 'fit', values: ['slim'] }],
      }),
      200,
      'product_variants.changed',
    );
    assert.deepEqual(variants, { priceBookId: book.id, productId: 'S', variants: result?.body });
    assert.deepEqual(await onlyEvent(call('DELETE', p), 204, 'price_book.deleted'), {
      id: book.id,
      deleted: true,
    });

    const policyBody = { name: 'Deep discounts', when: { lineDiscountPercentAbove: 20 } };
    const policy = await onlyEvent(
      call('POST', '/v1/approval-policies', policyBody),
      201,
      'approval_policy.created',
    );
    assert.deepEqual(policy, result?.body);
    const a = `/v1/approval-policies/${policy.id}`;
    assert.deepEqual(
      await onlyEvent(call('PUT', a, { ...policyBody, isActive: false }), 200, 'approval_policy.updated'),
      result?.body,
    );
    assert.deepEqual(await onlyEvent(call('DELETE', a), 204, 'approval_policy.deleted'), {
      id: policy.id,
      deleted: true,
    });

    // Quotes: every write and action records its events, each with the quote as the write left it.
    const { configuration } = await pricedBundle(ctx);
    const quoteBody = { currency: 'USD', bundles: [configuration()] };
    const quoteEvent = async (method: string, url: string, status: number, type: string, body?: unknown) => {
      const object = await onlyEvent(call(method, url, body), status, type);
      assert.deepEqual(object, result?.body);
      return object;
    };
    const q = await quoteEvent('POST', '/v1/quotes', 201, 'quote.created', quoteBody);
    const qp = `/v1/quotes/${q.id}`;
    await quoteEvent('PUT', qp, 200, 'quote.updated', quoteBody);
    await quoteEvent('PATCH', qp, 200, 'quote.updated', { title: 'Evented' });
    await quoteEvent('POST', `${qp}/reprice`, 200, 'quote.updated');
    const beforeSubmit = await lastEventId(ctx);
    const submitted = await call('POST', `${qp}/submit`)();
    assert.equal(submitted.status, 200, submitted.text);
    const submitEvents = await feed(ctx, beforeSubmit);
    assert.deepEqual(
      submitEvents.map((e) => [e.type, e.requestId]),
      [
        ['quote.submitted', submitted.headers['x-request-id']],
        ['quote.approved', submitted.headers['x-request-id']],
      ],
    );
    for (const e of submitEvents) assert.deepEqual(e.data.object, submitted.body);
    await quoteEvent('POST', `${qp}/finalize`, 200, 'quote.finalized');
    await quoteEvent('POST', `${qp}/decline`, 200, 'quote.declined');
    await quoteEvent('POST', `${qp}/revise`, 201, 'quote.revised');
    const accepted = await quoteEvent('POST', '/v1/quotes', 201, 'quote.created', quoteBody);
    for (const action of ['submit', 'finalize']) {
      assert.equal((await ctx.call('POST', `/v1/quotes/${accepted.id}/${action}`)).status, 200);
    }
    await quoteEvent('POST', `/v1/quotes/${accepted.id}/accept`, 200, 'quote.accepted');
    const canceled = await quoteEvent('POST', '/v1/quotes', 201, 'quote.created', quoteBody);
    await quoteEvent('POST', `/v1/quotes/${canceled.id}/cancel`, 200, 'quote.canceled');
    const deleted = await quoteEvent('POST', '/v1/quotes', 201, 'quote.created', quoteBody);
    assert.deepEqual(await onlyEvent(call('DELETE', `/v1/quotes/${deleted.id}`), 204, 'quote.deleted'), {
      id: deleted.id,
      deleted: true,
    });

    // Approvals: with a policy every quote matches, a submit waits for an approver, who rejects, then approves.
    const everyQuote = { name: 'Every quote', when: { totalAbove: { currency: 'USD', amount: 0 } } };
    const policyMade = await ctx.call('POST', '/v1/approval-policies', { body: everyQuote });
    assert.equal(policyMade.status, 201, policyMade.text);
    const approver = await ctx.newKey('acme', { approver: true, name: 'Events approver' });
    const decide = (action: 'approve' | 'reject', id: string, body?: unknown) => async () => {
      called.push(`POST /v1/quotes/${id}/${action}`);
      result = await ctx.call('POST', `/v1/quotes/${id}/${action}`, { key: approver, body });
      return result;
    };
    const waiting = await quoteEvent('POST', '/v1/quotes', 201, 'quote.created', quoteBody);
    const w = `/v1/quotes/${waiting.id}`;
    assert.equal(
      (await quoteEvent('POST', `${w}/submit`, 200, 'quote.submitted')).status,
      'pending_approval',
    );
    const rejected = await onlyEvent(
      decide('reject', waiting.id, { comment: 'Not yet' }),
      200,
      'quote.rejected',
      approver,
    );
    assert.deepEqual(rejected, result?.body);
    assert.equal(rejected.status, 'draft');
    await quoteEvent('POST', `${w}/submit`, 200, 'quote.submitted');
    const approved = await onlyEvent(decide('approve', waiting.id), 200, 'quote.approved', approver);
    assert.deepEqual(approved, result?.body);
    assert.equal(approved.status, 'approved');
    const policyGone = await ctx.call('DELETE', `/v1/approval-policies/${policyMade.body.id}`);
    assert.equal(policyGone.status, 204);

    // A catalogue apply records one event per bundle it made, changed or deleted.
    const applied = await onlyEvent(
      call('POST', '/v1/catalogue/apply', {
        formatVersion: 1,
        bundles: [{ header: { productId: 'EV-CAT' } }],
      }),
      200,
      'bundle.created',
    );
    assert.equal(applied.header.productId, 'EV-CAT');

    // Every operation a read-only key may not call was called above, but a webhook endpoint's configuration,
    // which records no event (the next test).
    await ctx.app.ready();
    const document = ctx.app.swagger() as unknown as OpenApiDocument;
    const writes = operationsOf(document).filter(
      (operation) => operation.writes && !operation.path.startsWith('/v1/webhook-endpoints'),
    );
    assert.ok(writes.length >= 20, `${writes.length} write operations`);
    const missed = writes
      .filter((operation) => {
        const template = new RegExp(`^${operation.path.replace(/\{\w+\}/g, '[^/]+')}$`);
        return !called.some((made) => {
          const [method, url] = made.split(' ');
          return method === operation.method && template.test(url as string);
        });
      })
      .map((operation) => `${operation.method} ${operation.path}`);
    assert.deepEqual(missed, []);
  });

  test('a webhook endpoint’s configuration records no event', async () => {
    const before = await lastEventId(ctx);
    const made = await ctx.call('POST', '/v1/webhook-endpoints', {
      body: { url: 'https://hooks.example.com/events', eventTypes: ['*'] },
    });
    assert.equal(made.status, 201, made.text);
    const path = `/v1/webhook-endpoints/${made.body.id}`;
    assert.equal((await ctx.call('PATCH', path, { body: { description: 'quiet' } })).status, 200);
    assert.equal((await ctx.call('POST', `${path}/rotate-secret`)).status, 200);
    assert.equal((await ctx.call('DELETE', path)).status, 204);
    assert.deepEqual(await feed(ctx, before), []);
  });

  test('a rejected write records nothing, nor does a read or a replay', async () => {
    const { bundle, options } = await createBundle(ctx);
    const before = await lastEventId(ctx);
    const b = `/v1/bundles/${bundle.id}`;
    assertProblem(
      await ctx.call('PUT', `${b}/options/${options[0].id}`, {
        body: { configuration: { minCount: 3, maxCount: 1 } },
      }),
      422,
    );
    assertProblem(
      await ctx.call('PATCH', b, { body: { isActive: true }, headers: { 'if-match': '"nope"' } }),
      412,
    );
    assertProblem(await ctx.call('DELETE', '/v1/bundles/bnd_00000000000000000000000000'), 404);
    assert.equal((await ctx.call('GET', b)).status, 200);
    const body = { header: { productId: 'ONCE', properties: {} } };
    const headers = { 'idempotency-key': 'events-once' };
    assert.equal((await ctx.call('POST', '/v1/bundles', { body, headers })).status, 201);
    assert.equal((await ctx.call('POST', '/v1/bundles', { body, headers })).status, 201);
    const events = await feed(ctx, before);
    assert.deepEqual(
      events.map((e) => e.type),
      ['bundle.created'],
    );
  });

  test('the feed pages by id in ascending order and filters by type', async () => {
    const key = await ctx.newKey('feed-paging');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ctx.call('POST', '/v1/bundles', {
        key,
        body: { header: { productId: `P-${i}`, properties: {} } },
      });
      made.push(res.body.id);
      await ctx.call('PATCH', `/v1/bundles/${res.body.id}`, { key, body: { isActive: false } });
    }
    const first = await ctx.call('GET', '/v1/events', { key, query: { limit: '3' } });
    assert.equal(first.body.events.length, 3);
    assert.equal(first.body.nextKey, first.body.events[2].id);
    const all = await feed(ctx, undefined, key);
    assert.equal(all.length, 10);
    const ids = all.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort());
    assert.deepEqual(
      all.filter((e) => e.type === 'bundle.created').map((e) => e.data.object.id),
      made,
    );
    const second = await ctx.call('GET', '/v1/events', {
      key,
      query: { limit: '3', after: first.body.nextKey },
    });
    assert.deepEqual(second.body.events, all.slice(3, 6));
    const last = await ctx.call('GET', '/v1/events', { key, query: { limit: '4', after: ids[5] as string } });
    assert.deepEqual(last.body, { events: all.slice(6) });

    const created = await ctx.call('GET', '/v1/events', {
      key,
      query: { types: 'bundle.created,option.created' },
    });
    assert.deepEqual(
      created.body.events.map((e: Json) => e.data.object.id),
      made,
    );
    assertProblem(await ctx.call('GET', '/v1/events', { key, query: { types: 'bundle.created,nope' } }), 400);
    assertProblem(await ctx.call('GET', '/v1/events', { key, query: { after: 'bnd_1' } }), 400);
    assertProblem(await ctx.call('GET', '/v1/events', { key, query: { limit: '101' } }), 400);
  });

  test('order=desc lists newest first and pages back in time, with the same filters', async () => {
    const key = await ctx.newKey('feed-newest');
    for (let i = 0; i < 4; i++) {
      const res = await ctx.call('POST', '/v1/bundles', {
        key,
        body: { header: { productId: `N-${i}`, properties: {} } },
      });
      await ctx.call('PATCH', `/v1/bundles/${res.body.id}`, { key, body: { isActive: false } });
    }
    const oldest = await feed(ctx, undefined, key);
    const newest = [...oldest].reverse();
    const first = await ctx.call('GET', '/v1/events', { key, query: { order: 'desc', limit: '3' } });
    assert.deepEqual(first.body, { events: newest.slice(0, 3), nextKey: newest[2].id });
    const second = await ctx.call('GET', '/v1/events', {
      key,
      query: { order: 'desc', limit: '5', after: first.body.nextKey },
    });
    assert.deepEqual(second.body, { events: newest.slice(3) });
    const asc = await ctx.call('GET', '/v1/events', { key, query: { order: 'asc', limit: '100' } });
    assert.deepEqual(asc.body.events, oldest);
    const updated = await ctx.call('GET', '/v1/events', {
      key,
      query: { order: 'desc', types: 'bundle.updated', limit: '2' },
    });
    assert.deepEqual(updated.body.events, newest.filter((e) => e.type === 'bundle.updated').slice(0, 2));
    assertProblem(await ctx.call('GET', '/v1/events', { key, query: { order: 'newest' } }), 400);
  });

  test('an event names the key whose write made it, as it was named then; the command line’s name none', async () => {
    const key = await ctx.newKey('events-keys', { name: 'Pricing desk' });
    const unnamed = await ctx.newKey('events-keys');
    const made = await ctx.call('POST', '/v1/bundles', {
      key,
      body: { header: { productId: 'K-1', properties: {} } },
    });
    await ctx.call('PATCH', `/v1/bundles/${made.body.id}`, { key: unnamed, body: { isActive: false } });
    await createBundleOutsideHttp(scopeOutsideHttp(ctx.db, 'events-keys'), {
      header: { productId: 'K-CLI', properties: {} },
    });
    const ids = await Promise.all(
      [key, unnamed].map(async (k) => (await ctx.call('GET', '/v1/keys/current', { key: k })).body.keyId),
    );
    assert.deepEqual(
      (await feed(ctx, undefined, key)).map((e) => [e.type, e.keyId, e.keyName]),
      [
        ['bundle.created', ids[0], 'Pricing desk'],
        ['bundle.updated', ids[1], null],
        ['bundle.created', null, null],
      ],
    );
  });

  test('another account’s events are never listed and answer 404', async () => {
    const mine = await ctx.newKey('events-mine');
    const theirs = await ctx.newKey('events-theirs');
    await ctx.call('POST', '/v1/bundles', {
      key: mine,
      body: { header: { productId: 'X', properties: {} } },
    });
    const [event] = await feed(ctx, undefined, mine);
    assert.equal(event.accountId, 'events-mine');
    assert.deepEqual(await feed(ctx, undefined, theirs), []);
    assertProblem(await ctx.call('GET', `/v1/events/${event.id}`, { key: theirs }), 404, 'not_found');
    assertProblem(await ctx.call('GET', '/v1/events/evt_nope'), 404, 'not_found');
  });

  test('expired events are purged in batches; younger ones stay', async () => {
    const old = Array.from({ length: PURGE_BATCH * 2 + 7 }, () => ({
      account_id: 'events-purge',
      id: newId('event'),
      type: 'bundle.deleted',
      created_at: new Date().toISOString(),
      request_id: null,
      data: '{"object":{}}',
      key_id: null,
      key_name: null,
    }));
    for (let i = 0; i < old.length; i += 500) await insertEvents(ctx.db, old.slice(i, i + 500));
    const key = await ctx.newKey('events-purge');
    const day = 24 * 60 * 60 * 1000;
    assert.equal(await purgeExpiredEvents(ctx.db, 30, Date.now() - day), 0);
    const cut = Date.now() + 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await ctx.call('POST', '/v1/bundles', { key, body: { header: { productId: 'KEEP', properties: {} } } });
    // 30 days from a clock past the old events, but before the new one.
    const purged = await purgeExpiredEvents(ctx.db, 30, cut + 30 * day);
    assert.ok(purged >= old.length, `${purged}`);
    const left = await feed(ctx, undefined, key);
    assert.deepEqual(
      left.map((e) => e.data.object.header?.productId),
      ['KEEP'],
    );
  });
});
