import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Type } from 'typebox';
import { DatabaseUnavailableError } from '../../src/db/errors.ts';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';

const mebibyte = 1024 * 1024;

describeEachDatabase('problem responses', (ctx) => {
  before(async () => {
    const body = Type.Object(
      {
        name: Type.String({ minLength: 1 }),
        count: Type.Integer({ minimum: 0 }),
        nested: Type.Optional(Type.Object({ flag: Type.Boolean() }, { additionalProperties: false })),
      },
      { additionalProperties: false },
    );
    ctx.app.post('/v1/problem-probe/echo', { schema: { body } }, async (request) => ({ echo: request.body }));
    ctx.app.post('/v1/problem-probe/no-body', async (request) => ({ body: request.body ?? null }));
    ctx.app.get(
      '/v1/problem-probe/items/:itemId',
      {
        schema: {
          params: Type.Object({ itemId: Type.String({ pattern: '^itm_' }) }),
          querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }),
        },
      },
      async (request) => ({ query: request.query }),
    );
    ctx.app.get('/v1/problem-probe/crash', async () => {
      const error = new Error('column "secret" does not exist: select secret from secret_table');
      throw Object.assign(error, { code: '42703' });
    });
    ctx.app.get('/v1/problem-probe/outage', async () => {
      throw new DatabaseUnavailableError(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    });
    await ctx.app.ready();
  });

  test('a POST body with no content type is 415', async () => {
    const result = await ctx.call('POST', '/v1/problem-probe/echo', {
      body: '{"name":"a","count":1}',
      headers: { 'content-type': '' },
    });
    assertProblem(result, 415, 'unsupported_media_type');
  });

  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data',
  ]) {
    test(`a ${type} body is 415`, async () => {
      const result = await ctx.call('POST', '/v1/problem-probe/echo', {
        body: '{"name":"a","count":1}',
        headers: { 'content-type': type },
      });
      assertProblem(result, 415, 'unsupported_media_type');
      assert.match(result.body.detail, /application\/json/);
    });
  }

  test('application/json with a charset is read', async () => {
    const result = await ctx.call('POST', '/v1/problem-probe/echo', {
      body: { name: 'ü', count: 1 },
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.body, { echo: { name: 'ü', count: 1 } });
  });

  for (const [name, text] of [
    ['truncated JSON', '{"name":'],
    ['a trailing comma', '{"name":"a","count":1,}'],
    ['single quotes', "{'name':'a'}"],
    ['a bare word', 'hello'],
  ] as const) {
    test(`malformed JSON (${name}) is 400 malformed_json with one item at the body`, async () => {
      const result = await ctx.call('POST', '/v1/problem-probe/echo', { body: text });
      assertProblem(result, 400, 'malformed_json');
      assert.deepEqual(result.body.errors, [
        { code: 'invalid_json', in: 'body', pointer: '', message: 'is not valid JSON' },
      ]);
      assert.equal(result.body.errorCount, 1);
    });
  }

  test('an empty JSON body is no body: 400 where one is needed, accepted where not', async () => {
    const needed = await ctx.call('POST', '/v1/problem-probe/echo', { body: '' });
    assertProblem(needed, 400, 'validation_failed');
    assert.deepEqual(needed.body.errors, [
      { code: 'invalid_required', in: 'body', pointer: '', message: 'a JSON body is required' },
    ]);
    const notNeeded = await ctx.call('POST', '/v1/problem-probe/no-body', { body: '' });
    assert.equal(notNeeded.status, 200, notNeeded.text);
    assert.deepEqual(notNeeded.body, { body: null });
  });

  test('a body over 1 MiB is 413, one just under is read', async () => {
    const over = await ctx.call('POST', '/v1/problem-probe/echo', {
      body: JSON.stringify({ name: 'x'.repeat(mebibyte), count: 1 }),
    });
    assertProblem(over, 413, 'payload_too_large');
    const under = await ctx.call('POST', '/v1/problem-probe/echo', {
      body: JSON.stringify({ name: 'x'.repeat(mebibyte - 100), count: 1 }),
    });
    assert.equal(under.status, 200);
  });

  for (const [name, text, at] of [
    ['__proto__', '{"name":"a","count":1,"__proto__":{"isAdmin":true}}', '/__proto__'],
    ['nested __proto__', '{"name":"a","count":1,"nested":{"__proto__":{"x":1}}}', '/nested/__proto__'],
    ['constructor.prototype', '{"name":"a","count":1,"constructor":{"prototype":{"x":1}}}', '/constructor'],
  ] as const) {
    test(`a prototype-poisoning body (${name}) is 400 with a pointer at the key`, async () => {
      const result = await ctx.call('POST', '/v1/problem-probe/echo', { body: text });
      assertProblem(result, 400, 'validation_failed');
      assert.deepEqual(result.body.errors, [
        { code: 'forbidden_key', in: 'body', pointer: at, message: 'is not an allowed field name' },
      ]);
      assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    });
  }

  test('schema violations list every problem with a JSON pointer into the body', async () => {
    const result = await ctx.call('POST', '/v1/problem-probe/echo', {
      body: { name: '', count: '3', nested: { flag: 'yes', extra: 1 }, unknown: true },
    });
    assertProblem(result, 400, 'validation_failed');
    const found = result.body.errors
      .map((e: { in: string; pointer: string }) => `${e.in} ${e.pointer}`)
      .sort();
    assert.deepEqual(found, [
      'body /count',
      'body /name',
      'body /nested/extra',
      'body /nested/flag',
      'body /unknown',
    ]);
    for (const error of result.body.errors) {
      assert.deepEqual(Object.keys(error).sort(), ['code', 'in', 'message', 'pointer']);
      assert.match(error.code, /^[a-z_]+$/);
    }
  });

  test('pointers escape field names and reach into property maps', async () => {
    const result = await ctx.call('POST', '/v1/bundles', {
      body: { header: { productId: 'p', properties: { ['x'.repeat(201)]: 'a' } }, 'a/b~c': 1 },
    });
    assertProblem(result, 400, 'validation_failed');
    assert.deepEqual(result.body.errors.map((e: { pointer: string }) => e.pointer).sort(), [
      '/a~1b~0c',
      `/header/properties/${'x'.repeat(201)}`,
    ]);
  });

  test('query and path violations point into the query and the path', async () => {
    const result = await ctx.call('GET', '/v1/problem-probe/items/nope', { query: { limit: '0' } });
    assertProblem(result, 400, 'validation_failed');
    assert.deepEqual(
      result.body.errors.map((e: { in: string; pointer: string }) => `${e.in} ${e.pointer}`),
      ['path /itemId'],
      'path parameters are checked first',
    );
    const query = await ctx.call('GET', '/v1/problem-probe/items/itm_1', { query: { limit: '101' } });
    assertProblem(query, 400, 'validation_failed');
    assert.deepEqual(query.body.errors[0].in, 'query');
    assert.deepEqual(query.body.errors[0].pointer, '/limit');
    const good = await ctx.call('GET', '/v1/problem-probe/items/itm_1', { query: { limit: '7' } });
    assert.deepEqual(good.body, { query: { limit: 7 } });
  });

  test('an unknown route is a 404 problem, under /v1 and at the root', async () => {
    assertProblem(await ctx.call('GET', '/v1/no-such-thing'), 404, 'not_found');
    assertProblem(await ctx.call('GET', '/no-such-thing', { key: null }), 404, 'not_found');
    assertProblem(await ctx.call('DELETE', '/healthz', { key: null }), 404, 'not_found');
  });

  test('an id the account does not have is 404 not_found at any length; without a key 401', async () => {
    for (const length of [1, 40, 300, 301, 5000, 15000]) {
      const id = 'x'.repeat(length);
      for (const [method, url] of [
        ['GET', `/v1/bundles/${id}`],
        ['POST', `/v1/bundles/${id}/options/opt_1/clone`],
        ['DELETE', `/v1/bundles/bnd_1/options/${id}`],
        ['DELETE', `/v1/pricebooks/${id}`],
        ['GET', `/v1/pricebooks/${id}/pricedProducts`],
        ['GET', `/v1/events/${id}`],
      ] as const) {
        const result = await ctx.call(method, url);
        assertProblem(result, 404, 'not_found');
        assert.equal(result.body.errors, undefined, `${method} ${url.slice(0, 40)}`);
        assertProblem(await ctx.call(method, url, { key: null }), 401, 'unauthorized');
      }
    }
  });

  test('a URL that cannot be decoded is a 400 problem', async () => {
    assertProblem(await ctx.call('GET', '/v1/problem-probe/items/%E0%A4%A'), 400, 'bad_request');
  });

  test('a 500 shows no message, SQL, code or stack', async () => {
    const result = await ctx.call('GET', '/v1/problem-probe/crash');
    assertProblem(result, 500, 'internal_error');
    for (const leak of ['secret_table', 'select', '42703', 'Error', 'at ', '.ts']) {
      assert.ok(!result.text.includes(leak), `the body shows ${leak}: ${result.text}`);
    }
    assert.deepEqual(Object.keys(result.body).sort(), [
      'code',
      'detail',
      'instance',
      'requestId',
      'status',
      'title',
      'type',
    ]);
  });

  test('a database outage is 503 with Retry-After', async () => {
    const result = await ctx.call('GET', '/v1/problem-probe/outage');
    assertProblem(result, 503, 'service_unavailable');
    assert.equal(result.headers['retry-after'], '1');
    assert.ok(!result.text.includes('ECONNREFUSED'));
  });

  test('the instance is the path without the query', async () => {
    const result = await ctx.call('GET', '/v1/no-such-thing', { query: { secret: 'x' } });
    assert.equal(result.body.instance, '/v1/no-such-thing');
  });

  test('x-request-id: a safe incoming one is echoed, an unsafe one replaced, else one is made', async () => {
    const echoed = await ctx.call('GET', '/healthz', { headers: { 'x-request-id': 'client-42.a:b@c' } });
    assert.equal(echoed.headers['x-request-id'], 'client-42.a:b@c');
    const problem = await ctx.call('GET', '/v1/no-such-thing', { headers: { 'x-request-id': 'trace-7' } });
    assert.equal(problem.headers['x-request-id'], 'trace-7');
    assert.equal(problem.body.requestId, 'trace-7');
    for (const unsafe of ['has space', 'x'.repeat(129), 'inject\\"quote', '<script>']) {
      const replaced = await ctx.call('GET', '/healthz', { headers: { 'x-request-id': unsafe } });
      assert.match(String(replaced.headers['x-request-id']), /^req_[0-9A-Z]{26}$/, unsafe);
    }
    const made = await ctx.call('GET', '/healthz');
    const again = await ctx.call('GET', '/healthz');
    assert.match(String(made.headers['x-request-id']), /^req_[0-9A-Z]{26}$/);
    assert.notEqual(made.headers['x-request-id'], again.headers['x-request-id']);
  });
});
