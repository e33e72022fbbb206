import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle, readOption } from '../helpers/factories.ts';
import { problemPointers } from './support.ts';

describeEachDatabase('price books', (ctx) => {
  test('GET answers the book of an option', async () => {
    const { options } = await createBundle(ctx);
    const option = options[0];
    const res = await ctx.call('GET', `/v1/pricebooks/${option.priceBookId}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      id: option.priceBookId,
      accountId: 'acme',
      name: option.name,
      description: null,
      bundleOptionId: option.id,
      isDeleted: false,
      effectiveStartDate: null,
      effectiveEndDate: null,
      createdAt: option.createdAt,
      updatedAt: res.body.updatedAt,
    });
  });

  test('GET of an unknown book is 404, without a key 401', async () => {
    const missing = await ctx.call('GET', '/v1/pricebooks/pb_nothing');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'not_found');
    const { options } = await createBundle(ctx);
    const anonymous = await ctx.call('GET', `/v1/pricebooks/${options[0].priceBookId}`, { key: null });
    assert.equal(anonymous.status, 401);
  });

  test('POST makes a new book the option’s current one, dates in UTC with milliseconds', async () => {
    const { bundle, options } = await createBundle(ctx);
    const option = options[1];
    const res = await ctx.call('POST', '/v1/pricebooks', {
      body: {
        bundleOptionId: option.id,
        name: 'Spring 2025',
        description: 'Seasonal prices',
        effectiveStartDate: '2025-03-01T02:00:00+02:00',
        effectiveEndDate: '2025-06-01T00:00:00Z',
      },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.id, /^pb_[0-9A-Z]{26}$/);
    assert.equal(res.headers.location, `/v1/pricebooks/${res.body.id}`);
    assert.deepEqual(res.body, {
      id: res.body.id,
      accountId: 'acme',
      name: 'Spring 2025',
      description: 'Seasonal prices',
      bundleOptionId: option.id,
      isDeleted: false,
      effectiveStartDate: '2025-03-01T00:00:00.000Z',
      effectiveEndDate: '2025-06-01T00:00:00.000Z',
      createdAt: res.body.createdAt,
      updatedAt: res.body.createdAt,
    });
    assert.deepEqual((await ctx.call('GET', res.headers.location as string)).body, res.body);
    assert.equal((await readOption(ctx, bundle.id, option.id)).priceBookId, res.body.id);
    const previous = await ctx.call('GET', `/v1/pricebooks/${option.priceBookId}`);
    assert.equal(previous.body.isDeleted, false, 'the previous book is kept as it was');
  });

  test('POST names the book after the option by default', async () => {
    const { options } = await createBundle(ctx);
    const res = await ctx.call('POST', '/v1/pricebooks', { body: { bundleOptionId: options[0].id } });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, options[0].name);
    assert.equal(res.body.description, null);
    assert.equal(res.body.effectiveStartDate, null);
  });

  test('POST for an option the account does not have is 422 unknown_reference', async () => {
    const otherKey = await ctx.newKey('other-post');
    const { options } = await createBundle(ctx, { key: otherKey });
    for (const bundleOptionId of ['opt_unknown', options[0].id]) {
      const res = await ctx.call('POST', '/v1/pricebooks', { body: { bundleOptionId } });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'unknown_reference');
      assert.deepEqual(problemPointers(res.body), ['/bundleOptionId']);
    }
    assert.equal(
      (await readOption(ctx, options[0].bundleId, options[0].id, otherKey)).priceBookId,
      options[0].priceBookId,
    );
  });

  test('POST with a start not before the end is 422; a malformed body 400', async () => {
    const { options } = await createBundle(ctx);
    const same = '2025-01-01T00:00:00.000Z';
    const res = await ctx.call('POST', '/v1/pricebooks', {
      body: { bundleOptionId: options[0].id, effectiveStartDate: same, effectiveEndDate: same },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(res.body), ['/effectiveStartDate', '/effectiveEndDate']);

    const badDate = await ctx.call('POST', '/v1/pricebooks', {
      body: { bundleOptionId: options[0].id, effectiveStartDate: 'tomorrow' },
    });
    assert.equal(badDate.status, 400);
    assert.deepEqual(problemPointers(badDate.body), ['/effectiveStartDate']);
    const missing = await ctx.call('POST', '/v1/pricebooks', { body: { name: 'x' } });
    assert.equal(missing.status, 400);
    assert.deepEqual(problemPointers(missing.body), ['/bundleOptionId']);
    const extra = await ctx.call('POST', '/v1/pricebooks', {
      body: { bundleOptionId: options[0].id, color: 1 },
    });
    assert.equal(extra.status, 400);
    assert.deepEqual(problemPointers(extra.body), ['/color']);
    const notJson = await ctx.call('POST', '/v1/pricebooks', {
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(notJson.status, 415);
  });

  test('PATCH changes the fields given and keeps the others', async () => {
    const { options } = await createBundle(ctx);
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    const first = await ctx.call('PATCH', url, {
      body: { description: 'Main prices', effectiveStartDate: '2025-01-01T09:30:00.5+09:30' },
    });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, {
      id: options[0].priceBookId,
      accountId: 'acme',
      name: options[0].name,
      description: 'Main prices',
      bundleOptionId: options[0].id,
      isDeleted: false,
      effectiveStartDate: '2025-01-01T00:00:00.500Z',
      effectiveEndDate: null,
      createdAt: options[0].createdAt,
      updatedAt: first.body.updatedAt,
    });
    assert.ok(first.body.updatedAt >= first.body.createdAt);
    const second = await ctx.call('PATCH', url, {
      body: { name: 'Renamed', effectiveEndDate: '2026-01-01T00:00:00Z' },
    });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, {
      ...first.body,
      name: 'Renamed',
      effectiveEndDate: '2026-01-01T00:00:00.000Z',
      updatedAt: second.body.updatedAt,
    });
    const cleared = await ctx.call('PATCH', url, { body: { description: null, effectiveStartDate: null } });
    assert.deepEqual(cleared.body, {
      ...second.body,
      description: null,
      effectiveStartDate: null,
      updatedAt: cleared.body.updatedAt,
    });
    assert.deepEqual((await ctx.call('GET', url)).body, cleared.body);
  });

  test('PATCH whose dates would leave start not before the stored end is 422 and changes nothing', async () => {
    const { options } = await createBundle(ctx);
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    await ctx.call('PATCH', url, {
      body: { effectiveStartDate: '2025-01-01T00:00:00Z', effectiveEndDate: '2025-02-01T00:00:00Z' },
    });
    const before = (await ctx.call('GET', url)).body;
    const res = await ctx.call('PATCH', url, {
      body: { name: 'x', effectiveEndDate: '2024-12-31T23:59:59Z' },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(res.body), ['/effectiveEndDate']);
    assert.deepEqual((await ctx.call('GET', url)).body, before);
    const bad = await ctx.call('PATCH', url, { body: { name: '' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(problemPointers(bad.body), ['/name']);
  });

  test('PATCH of an unknown book is 404', async () => {
    const res = await ctx.call('PATCH', '/v1/pricebooks/pb_nothing', { body: { name: 'x' } });
    assert.equal(res.status, 404);
  });

  test('DELETE is a soft delete: still readable, no longer writable, again a no-op', async () => {
    const { options } = await createBundle(ctx);
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    const res = await ctx.call('DELETE', url);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    const read = await ctx.call('GET', url);
    assert.equal(read.status, 200);
    assert.equal(read.body.isDeleted, true);
    assert.equal((await ctx.call('DELETE', url)).status, 204);
    const patch = await ctx.call('PATCH', url, { body: { name: 'x' } });
    assert.equal(patch.status, 409);
    assert.equal(patch.body.code, 'conflict');
    assert.equal((await ctx.call('GET', url)).body.name, options[0].name);
    assert.equal((await ctx.call('DELETE', '/v1/pricebooks/pb_nothing')).status, 404);
  });

  test('after a delete the option keeps the id until POST makes a new current book', async () => {
    const { bundle, options } = await createBundle(ctx);
    const option = options[0];
    await ctx.call('DELETE', `/v1/pricebooks/${option.priceBookId}`);
    assert.equal((await readOption(ctx, bundle.id, option.id)).priceBookId, option.priceBookId);
    const made = await ctx.call('POST', '/v1/pricebooks', { body: { bundleOptionId: option.id } });
    assert.equal((await readOption(ctx, bundle.id, option.id)).priceBookId, made.body.id);
  });

  test('another account sees 404 and changes nothing', async () => {
    const { options } = await createBundle(ctx);
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    const before = (await ctx.call('GET', url)).body;
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('GET', url, { key: other })).status, 404);
    assert.equal((await ctx.call('PATCH', url, { key: other, body: { name: 'stolen' } })).status, 404);
    assert.equal((await ctx.call('DELETE', url, { key: other })).status, 404);
    assert.deepEqual((await ctx.call('GET', url)).body, before);
  });

  test('a read-only key may read but not write', async () => {
    const { options } = await createBundle(ctx);
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('GET', url, { key: readOnly })).status, 200);
    assert.equal((await ctx.call('PATCH', url, { key: readOnly, body: { name: 'x' } })).status, 403);
  });
});
