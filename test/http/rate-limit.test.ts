import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { TokenBuckets } from '../../src/http/rate-limit.ts';
import { assertProblem, callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';

describe('token buckets', () => {
  test('a burst, then one token per 1/rate seconds, with Retry-After rounded up to whole seconds', () => {
    let now = 0;
    const buckets = new TokenBuckets(0.5, 3, () => now);
    assert.deepEqual(
      [1, 2, 3].map(() => buckets.take('a')),
      [
        { allowed: true, remaining: 2 },
        { allowed: true, remaining: 1 },
        { allowed: true, remaining: 0 },
      ],
    );
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 2 });
    now += 1500;
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
    now += 500;
    assert.deepEqual(buckets.take('a'), { allowed: true, remaining: 0 });
  });

  test('Retry-After is at least one second, however fast the refill', () => {
    let now = 0;
    const buckets = new TokenBuckets(1000, 1, () => now);
    buckets.take('a');
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
    now += 1;
    assert.equal(buckets.take('a').allowed, true);
  });

  test('each id has its own bucket', () => {
    const buckets = new TokenBuckets(1, 1, () => 0);
    assert.equal(buckets.take('a').allowed, true);
    assert.equal(buckets.take('a').allowed, false);
    assert.equal(buckets.take('b').allowed, true);
  });

  test('a refilled bucket is forgotten, so memory follows the ids active lately', () => {
    let now = 0;
    const buckets = new TokenBuckets(10, 20, () => now);
    for (let i = 0; i < 1000; i++) buckets.take(`key-${i}`);
    assert.equal(buckets.size, 1000);
    now += 2000;
    buckets.take('active');
    assert.equal(buckets.size, 1);
  });
});

describe('rate limit configuration', () => {
  test('defaults to 100 per second in bursts of 200; 0 turns it off', () => {
    const defaults = loadConfig({});
    assert.deepEqual([defaults.rateLimitPerSecond, defaults.rateLimitBurst], [100, 200]);
    const set = loadConfig({ RATE_LIMIT_PER_SECOND: '0.5', RATE_LIMIT_BURST: '3' });
    assert.deepEqual([set.rateLimitPerSecond, set.rateLimitBurst], [0.5, 3]);
    assert.equal(loadConfig({ RATE_LIMIT_PER_SECOND: '0' }).rateLimitPerSecond, 0);
  });

  test('a bad value names its variable', () => {
    for (const [name, value] of [
      ['RATE_LIMIT_PER_SECOND', 'fast'],
      ['RATE_LIMIT_PER_SECOND', '-1'],
      ['RATE_LIMIT_BURST', '0'],
      ['RATE_LIMIT_BURST', '1.5'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, new RegExp(`^${name} is not valid`));
          return true;
        },
      );
    }
  });
});

describeEachDatabase('rate limit per API key', (ctx) => {
  let limited: App;
  let fast: App;
  let keys: { first: string; second: string; other: string };

  before(async () => {
    limited = await buildApp({
      config: testConfig({ rateLimitPerSecond: 0.01, rateLimitBurst: 3 }),
      database: ctx.database.handle,
    });
    fast = await buildApp({
      config: testConfig({ rateLimitPerSecond: 20, rateLimitBurst: 1 }),
      database: ctx.database.handle,
    });
    keys = {
      first: await ctx.newKey('rate-1'),
      second: await ctx.newKey('rate-1'),
      other: await ctx.newKey('rate-2'),
    };
  });

  after(async () => {
    await limited?.close();
    await fast?.close();
  });

  test('a burst, then 429 rate_limited with Retry-After and RateLimit headers', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await callApp(limited, keys.first, 'GET', '/v1/bundles'));
    assert.deepEqual(
      answers.map((a) => [a.status, a.headers['ratelimit-limit'], a.headers['ratelimit-remaining']]),
      [
        [200, '3', '2'],
        [200, '3', '1'],
        [200, '3', '0'],
      ],
    );
    const refused = await callApp(limited, keys.first, 'POST', '/v1/bundles', {
      body: { header: { productId: 'P', properties: {} } },
    });
    assertProblem(refused, 429, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '100');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
  });

  test('each key has its own budget, also within one account', async () => {
    assert.equal((await callApp(limited, keys.second, 'GET', '/v1/bundles')).status, 200);
    assert.equal((await callApp(limited, keys.other, 'GET', '/v1/bundles')).status, 200);
  });

  test('requests without a valid key, and the operational endpoints, are not counted', async () => {
    for (let i = 0; i < 5; i++) {
      assertProblem(await callApp(limited, 'cpq_unknown', 'GET', '/v1/bundles'), 401, 'unauthorized');
      assert.equal((await callApp(limited, keys.other, 'GET', '/healthz')).status, 200);
    }
    const healthz = await callApp(limited, keys.other, 'GET', '/healthz');
    assert.equal(healthz.headers['ratelimit-limit'], undefined);
    const counted = await callApp(limited, keys.other, 'GET', '/v1/bundles');
    assert.equal(counted.headers['ratelimit-remaining'], '1', 'the second call of this key that counts');
  });

  test('tokens come back with time', async () => {
    // The clock moves only when told, so a slow machine cannot refill the bucket between the first two calls.
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      assert.equal((await callApp(fast, keys.first, 'GET', '/v1/bundles')).status, 200);
      assertProblem(await callApp(fast, keys.first, 'GET', '/v1/bundles'), 429, 'rate_limited');
      mock.timers.tick(49);
      assertProblem(await callApp(fast, keys.first, 'GET', '/v1/bundles'), 429, 'rate_limited');
      mock.timers.tick(11);
      assert.equal((await callApp(fast, keys.first, 'GET', '/v1/bundles')).status, 200);
    } finally {
      mock.timers.reset();
    }
  });

  test('off (the test default): no 429 and no RateLimit headers', async () => {
    for (let i = 0; i < 50; i++) {
      const result = await ctx.call('GET', '/v1/bundles');
      assert.equal(result.status, 200);
      assert.equal(result.headers['ratelimit-limit'], undefined);
    }
  });

  test('the OpenAPI description states the limits, from the configuration that enforces them', async () => {
    const described = async (app: App) =>
      String((await callApp(app, keys.first, 'GET', '/openapi.json', { key: null })).body.info.description);
    const text = await described(limited);
    assert.match(text, /0\.01 requests per second per API key, in bursts of up to 3/);
    assert.match(text, new RegExp(`at most ${ctx.config.bodyLimit} bytes`));
    assert.match(text, /Page size \(`limit`\): 1-100, default 25/);
    assert.match(text, /`bundleIds` of bundles-details: 1-100 ids/);
    assert.match(text, /Quotes: 1-100 bundles, at most 1000 products/);
    assert.match(text, /Idempotency-Key: 1-255 characters/);
    assert.match(await described(ctx.app), /Rate limit: none on this server/);
  });
});
