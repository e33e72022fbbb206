import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { assertProblem, callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';

describe('CORS configuration', () => {
  test('off by default; CORS_ORIGINS is a comma-separated list of origins', () => {
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(
      loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ' }).corsOrigins,
      ['https://app.example.com', 'http://localhost:5173'],
    );
  });

  test('a value that is not an origin names the variable', () => {
    for (const value of ['app.example.com', 'https://app.example.com/path', '*']) {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: value }),
        (error: Error) => error instanceof ConfigError && /^CORS_ORIGINS is not valid/.test(error.message),
      );
    }
  });
});

describeEachDatabase('CORS', (ctx) => {
  const allowed = 'https://app.example.com';
  let withCors: App;

  before(async () => {
    withCors = await buildApp({
      config: testConfig({ corsOrigins: [allowed] }),
      database: ctx.database.handle,
    });
  });

  after(async () => {
    await withCors?.close();
  });

  test('off by default: no CORS headers, and a preflight is not answered', async () => {
    const read = await ctx.call('GET', '/v1/bundles', { headers: { origin: allowed } });
    assert.equal(read.status, 200);
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    const preflight = await ctx.call('OPTIONS', '/v1/bundles', {
      key: null,
      headers: { origin: allowed, 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assertProblem(preflight, 404, 'not_found');
  });

  test('an allowed origin gets its preflight answered without a key, and reads the headers clients need', async () => {
    const preflight = await callApp(withCors, ctx.key, 'OPTIONS', '/v1/bundles', {
      key: null,
      headers: {
        origin: allowed,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key,idempotency-key',
      },
    });
    assert.equal(preflight.status, 204, preflight.text);
    assert.equal(preflight.headers['access-control-allow-origin'], allowed);
    assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /x-api-key/);

    const read = await callApp(withCors, ctx.key, 'GET', '/v1/bundles', { headers: { origin: allowed } });
    assert.equal(read.status, 200);
    assert.equal(read.headers['access-control-allow-origin'], allowed);
    for (const header of ['etag', 'location', 'x-request-id', 'retry-after', 'idempotent-replayed']) {
      assert.match(String(read.headers['access-control-expose-headers']), new RegExp(header));
    }
  });

  test('another origin gets no CORS headers, and a request without a key is still 401', async () => {
    const read = await callApp(withCors, ctx.key, 'GET', '/v1/bundles', {
      headers: { origin: 'https://evil.example.net' },
    });
    assert.equal(read.status, 200);
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    const anonymous = await callApp(withCors, ctx.key, 'GET', '/v1/bundles', {
      key: null,
      headers: { origin: allowed },
    });
    assertProblem(anonymous, 401, 'unauthorized');
  });
});
