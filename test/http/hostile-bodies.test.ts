import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/shared/json-safety.ts';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

describeEachDatabase('hostile bodies are small 400s, never 500s, and nothing of them is stored', (ctx) => {
  test('an array of 349,000 bad elements is one problem, its length: its elements are not checked', async () => {
    const payload = `{"currency":"USD","bundles":[${Array(349_000).fill('1').join(',')}]}`;
    assert.ok(payload.length < ctx.config.bodyLimit);
    const result = await ctx.call('POST', '/v1/quotes/price', { body: payload });
    assertProblem(result, 400, 'validation_failed');
    assert.deepEqual(result.body.errors, [
      {
        code: 'invalid_max_items',
        in: 'body',
        pointer: '/bundles',
        message: 'must NOT have more than 100 items',
      },
    ]);
    assert.equal(result.body.errorCount, 1);
    assert.equal(result.body.detail, 'body /bundles: must NOT have more than 100 items');
  });

  test('an array within its bound is checked element by element: the first 100 problems and their count', async () => {
    const result = await ctx.call('POST', '/v1/quotes/price', {
      body: { currency: 'USD', bundles: Array(100).fill({ quantity: 'many' }) },
    });
    assertProblem(result, 400, 'validation_failed');
    assert.equal(result.body.errors.length, 100);
    assert.deepEqual(result.body.errors[0], {
      code: 'invalid_required',
      in: 'body',
      pointer: '/bundles/0/bundleId',
      message: 'is required',
    });
    assert.ok(result.body.errorCount >= 200, String(result.body.errorCount));
    assert.match(result.body.detail, /^\d+ problems were found in the body; the first 100 are listed$/);
    assert.ok(result.text.length < 20_000, `${result.text.length} bytes`);
  });

  test('a problem with few items states their count too', async () => {
    const result = await ctx.call('POST', '/v1/bundles', { body: { header: { productId: '' } } });
    assertProblem(result, 400, 'validation_failed');
    assert.equal(result.body.errorCount, result.body.errors.length);
    assert.equal(result.body.errorCount, 2);
  });

  test(`JSON nested deeper than ${MAX_JSON_DEPTH} is a 400, however deep (no stack overflow)`, async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 3_800, 200_000]) {
      const payload = `{"header":{"productId":"P","properties":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
      const result = await ctx.call('POST', '/v1/bundles', { body: payload });
      assertProblem(result, 400, 'validation_failed');
      assert.deepEqual(result.body.errors, [
        {
          code: 'too_deep',
          in: 'body',
          pointer: '',
          message: `nests arrays and objects more than ${MAX_JSON_DEPTH} deep`,
        },
      ]);
    }
    // Brackets inside strings are text, not nesting.
    const result = await ctx.call('POST', '/v1/bundles', {
      body: { header: { productId: '['.repeat(100), properties: { ['{'.repeat(50)]: '"\\['.repeat(30) } } },
    });
    assert.equal(result.status, 201, result.text);
  });

  test('a lone surrogate is refused with a pointer, in values and names, never stored as U+FFFD', async () => {
    const { bundle, options } = await createBundle(ctx);
    const option = options[0];
    const productsUrl = `/v1/bundles/${bundle.id}/options/${option.id}/products`;
    // Two ids that would both become "\ufffd" once stored: the second used to collide with the first, a 500.
    const pair = await ctx.call('POST', productsUrl, {
      body: '[{"productId":"\\ud801"},{"productId":"\\ud802"}]',
    });
    assertProblem(pair, 400, 'validation_failed');
    assert.deepEqual(
      pair.body.errors.map((e: { pointer: string; message: string }) => [e.pointer, e.message]),
      [
        ['/0/productId', 'must be valid Unicode: it holds a lone surrogate (U+D801)'],
        ['/1/productId', 'must be valid Unicode: it holds a lone surrogate (U+D802)'],
      ],
    );
    const name = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: '{"header":{"productId":"P","properties":{"x\\udc00y":"v"}}}',
    });
    assertProblem(name, 400, 'validation_failed');
    assert.deepEqual(
      name.body.errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
      [['body', '/header/properties/x\udc00y']],
    );
    // A pair written as two escapes is one valid character, and is kept as sent.
    const emoji = await ctx.call('POST', productsUrl, { body: '[{"productId":"\\ud83d\\ude00"}]' });
    assert.equal(emoji.status, 201, emoji.text);
    const read = await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${option.id}`);
    const ids = read.body.products.map((p: { productId: string }) => p.productId);
    assert.ok(ids.includes('😀'), ids.join());
    assert.ok(!ids.some((id: string) => id.includes('\ufffd')), ids.join());
  });

  test('a body that is not UTF-8 is refused rather than decoded to U+FFFD', async () => {
    const payload = Buffer.concat([
      Buffer.from('{"header":{"productId":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","properties":{}}}'),
    ]);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/v1/bundles',
      headers: { 'x-api-key': ctx.key, 'content-type': 'application/json' },
      payload,
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = response.json();
    assert.equal(body.code, 'malformed_json');
    assert.deepEqual(body.errors, [
      { code: 'invalid_utf8', in: 'body', pointer: '', message: 'is not valid UTF-8' },
    ]);
    const list = await ctx.call('GET', '/v1/bundles?limit=100');
    assert.ok(!JSON.stringify(list.body).includes('\ufffd'));
  });
});
