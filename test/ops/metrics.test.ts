import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { seedDemo } from '../../src/demo/seed-demo.ts';
import { packageVersion } from '../../src/version.ts';
import { DISABLE_AFTER_MS } from '../../src/webhooks/webhooks.worker.ts';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import {
  drain,
  fakeClock,
  privateApp,
  startReceiver,
  testWorker,
  until,
  write,
} from '../webhooks/support.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The Prometheus text format, strictly: every line a comment (# HELP, # TYPE) or a sample whose name, labels and
 * value are well formed; a line that is neither fails the test.
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/i.exec(line);
    assert.ok(match, `not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? []) {
      const at = pair.indexOf('=');
      labels[pair.slice(0, at)] = JSON.parse(pair.slice(at + 1));
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  )?.value;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describeEachDatabase('GET /metrics', (ctx) => {
  const scrape = async () => {
    const result = await ctx.call('GET', '/metrics', { key: null });
    assert.equal(result.status, 200, result.text);
    assert.match(String(result.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parseExposition(result.text);
  };

  test('needs no key, parses, and counts a known request by route template and status', async () => {
    const route = { method: 'GET', route: '/v1/bundles/:bundleId', status_code: '200' };
    const count = 'cpq_http_request_duration_seconds_count';
    const { bundle } = await createBundle(ctx);
    const before = sampleValue(await scrape(), count, route) ?? 0;
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).status, 200);
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).status, 200);
    const samples = await scrape();
    assert.equal(sampleValue(samples, count, route), before + 2);
    assert.ok((sampleValue(samples, 'cpq_http_request_duration_seconds_sum', route) ?? 0) > 0);
    assert.equal(
      sampleValue(samples, 'cpq_http_request_duration_seconds_bucket', { ...route, le: '+Inf' }),
      before + 2,
    );
    // A path no route matches is counted under one label, whatever the path.
    await ctx.call('GET', '/no/such/path/1');
    await ctx.call('GET', '/no/such/path/2');
    assert.equal(sampleValue(await scrape(), count, { route: 'unmatched', status_code: '404' }), 2);
    assert.ok((sampleValue(samples, 'process_resident_memory_bytes') ?? 0) > 0, 'Node’s own figures');
  });

  test('the details cache reports its misses, hits and bytes', async () => {
    const { bundle } = await createBundle(ctx);
    const cache = { cache: 'details' };
    const before = await scrape();
    const hitsBefore = sampleValue(before, 'cpq_cache_hits_total', cache) ?? 0;
    const missesBefore = sampleValue(before, 'cpq_cache_misses_total', cache) ?? 0;
    for (let i = 0; i < 3; i++) {
      assert.equal((await ctx.call('GET', `/v1/bundles-details?bundleIds=${bundle.id}`)).status, 200);
    }
    const after = await scrape();
    assert.equal(sampleValue(after, 'cpq_cache_misses_total', cache), missesBefore + 1);
    assert.equal(sampleValue(after, 'cpq_cache_hits_total', cache), hitsBefore + 2);
    assert.ok((sampleValue(after, 'cpq_cache_bytes', cache) ?? 0) > 0);
    assert.equal(sampleValue(after, 'cpq_heavy_answers_running'), 0);
    assert.equal(sampleValue(after, 'cpq_heavy_answers_waiting'), 0);
  });

  test('the PostgreSQL pool shows its connections; SQLite has none to show', async () => {
    const samples = await scrape();
    if (ctx.dialect === 'postgres') {
      assert.ok((sampleValue(samples, 'cpq_db_pool_connections') ?? 0) >= 1);
      assert.equal(sampleValue(samples, 'cpq_db_pool_waiting'), 0);
    } else {
      assert.equal(sampleValue(samples, 'cpq_db_pool_connections'), undefined);
    }
  });

  test('the webhook queue: deliveries waiting on enabled endpoints, and endpoints disabled for failing', async () => {
    const pending = 'cpq_webhook_deliveries_pending';
    const disabled = 'cpq_webhook_endpoints_disabled_failing';
    const key = await ctx.newKey('metrics-webhooks');
    const dead = await startReceiver(() => 503);
    const hooks = await privateApp(ctx);
    const clock = fakeClock();
    const worker = testWorker(ctx.db, { clock: clock.now });
    try {
      const before = await scrape();
      const [pendingBefore, disabledBefore] = [sampleValue(before, pending), sampleValue(before, disabled)];
      assert.ok(pendingBefore !== undefined && disabledBefore !== undefined);
      const body = { url: dead.url, eventTypes: ['bundle.created'] };
      assert.equal((await hooks.call('POST', '/v1/webhook-endpoints', { key, body })).status, 201);
      for (let i = 0; i < 3; i++) await write(ctx, `METERED-${i}`, key);
      await drain(worker);
      // Each failed its first attempt and waits for the next.
      const waiting = await scrape();
      assert.equal(sampleValue(waiting, pending), pendingBefore + 3);
      assert.equal(sampleValue(waiting, disabled), disabledBefore);

      clock.advance(DISABLE_AFTER_MS);
      await write(ctx, 'METERED-LAST', key);
      await drain(worker);
      // Disabled, its deliveries wait on nothing that will send them.
      const after = await scrape();
      assert.equal(sampleValue(after, pending), pendingBefore);
      assert.equal(sampleValue(after, disabled), disabledBefore + 1);
    } finally {
      await worker.stop(0);
      await hooks.close();
      await dead.close();
    }
  });

  test('cpq_build_info names the version package.json gives', async () => {
    assert.equal(sampleValue(await scrape(), 'cpq_build_info', { version: packageVersion }), 1);
  });

  test('quotes priced, configure answers and rule violations, by outcome', async () => {
    const account = 'metrics-quotes';
    const key = await ctx.newKey(account);
    const demo = await seedDemo(ctx.db, account);
    const option = (name: string) => demo.options.find((o) => o.name === name)?.optionId as string;
    const quote = (processor: string, accessory: string) => ({
      currency: 'USD',
      bundles: [
        {
          bundleId: demo.bundleId,
          quantity: 1,
          options: [
            { optionId: option('Processor'), products: [{ productId: processor, quantity: 1 }] },
            { optionId: option('Memory'), products: [{ productId: 'DEMO-RAM-DDR5', quantity: 1 }] },
            { optionId: option('Accessories'), products: [{ productId: accessory, quantity: 1 }] },
          ],
        },
      ],
    });
    const configure = (selections: { option: string; productId: string }[]) => ({
      currency: 'USD',
      selections: selections.map((s) => ({ optionId: option(s.option), productId: s.productId })),
    });
    const count = (samples: Sample[], name: string, outcome?: string) =>
      sampleValue(samples, name, outcome === undefined ? {} : { outcome }) ?? 0;
    const names = {
      quotes: 'cpq_quotes_priced_total',
      configure: 'cpq_configure_answers_total',
      violations: 'cpq_rule_violations_total',
    };
    const before = await scrape();
    const price = (body: unknown) => ctx.call('POST', '/v1/quotes/price', { key, body });
    assert.equal((await price(quote('DEMO-CPU-12C', 'DEMO-MOUSE'))).status, 200);
    // The dock needs the 12-core processor: one rule broken.
    assert.equal((await price(quote('DEMO-CPU-8C', 'DEMO-DOCK'))).status, 422);
    assert.equal((await price({ currency: 'USD' })).status, 400);
    const path = `/v1/bundles/${demo.bundleId}/configure`;
    const ask = (body: unknown) => ctx.call('POST', path, { key, body });
    assert.equal(
      (await ask(configure([{ option: 'Accessories', productId: 'DEMO-DOCK' }]))).body.valid,
      true,
    );
    const impossible = configure([
      { option: 'Accessories', productId: 'DEMO-DOCK' },
      { option: 'Processor', productId: 'DEMO-CPU-8C' },
    ]);
    assert.equal((await ask(impossible)).body.valid, false);
    const after = await scrape();
    const grew = (name: string, outcome?: string) =>
      count(after, name, outcome) - count(before, name, outcome);
    assert.deepEqual(
      ['priced', 'invalid', 'refused', 'failed'].map((outcome) => grew(names.quotes, outcome)),
      [1, 1, 1, 0],
    );
    assert.equal(grew(names.violations), 1);
    assert.deepEqual(
      ['valid', 'invalid', 'too_complex'].map((outcome) => grew(names.configure, outcome)),
      [1, 1, 0],
    );

    const bounded = await otherInstance(ctx, { configureMaxSteps: 1 });
    try {
      const refused = await bounded.call('POST', path, { key, body: configure([]) });
      assert.equal(refused.body.code, 'configuration_too_complex', refused.text);
      const samples = parseExposition((await bounded.call('GET', '/metrics', { key: null })).text);
      assert.equal(count(samples, names.configure, 'too_complex'), 1);
    } finally {
      await bounded.close();
    }
  });

  test('catalogue applies by outcome, and requests refused by the rate limit', async () => {
    const key = await ctx.newKey('metrics-catalogue');
    await write(ctx, 'METERED-CATALOGUE', key);
    const file = (await ctx.call('GET', '/v1/catalogue', { key })).body;
    const name = 'cpq_catalogue_applies_total';
    const before = await scrape();
    const apply = (query: Record<string, string>, body: unknown) =>
      ctx.call('POST', '/v1/catalogue/apply', { key, query, body });
    assert.equal((await apply({ dryRun: 'true' }, file)).status, 200);
    assert.equal((await apply({}, file)).status, 200);
    assert.equal((await apply({}, { ...file, bundles: 'none' })).status, 400);
    // Counted once the answer is out and the spooled file disposed of, which may follow the answer.
    const grown = async () => {
      const after = await scrape();
      return ['planned', 'applied', 'refused'].map(
        (outcome) =>
          (sampleValue(after, name, { outcome }) ?? 0) - (sampleValue(before, name, { outcome }) ?? 0),
      );
    };
    await until(async () => (await grown()).every((n) => n >= 1), 5000).catch(() => {});
    assert.deepEqual(await grown(), [1, 1, 1]);

    const limited = await otherInstance(ctx, { rateLimitPerSecond: 0.001, rateLimitBurst: 1 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await limited.call('GET', '/v1/bundles', { key })).status);
      assert.deepEqual(statuses, [200, 429, 429]);
      const samples = parseExposition((await limited.call('GET', '/metrics', { key: null })).text);
      assert.equal(sampleValue(samples, 'cpq_rate_limited_total'), 2);
    } finally {
      await limited.close();
    }
  });

  test('webhook deliveries by outcome: delivered, retrying', async () => {
    const key = await ctx.newKey('metrics-deliveries');
    const [good, bad] = [await startReceiver(() => 204), await startReceiver(() => 503)];
    const hooks = await privateApp(ctx);
    const worker = testWorker(ctx.db, { onAttempt: ctx.app.metrics.webhookAttempt });
    const name = 'cpq_webhook_deliveries_total';
    try {
      for (const receiver of [good, bad]) {
        const body = { url: receiver.url, eventTypes: ['bundle.created'] };
        assert.equal((await hooks.call('POST', '/v1/webhook-endpoints', { key, body })).status, 201);
      }
      const before = await scrape();
      await write(ctx, 'METERED-DELIVERY', key);
      await drain(worker);
      const after = await scrape();
      assert.deepEqual(
        ['delivered', 'retrying', 'failed'].map(
          (outcome) =>
            (sampleValue(after, name, { outcome }) ?? 0) - (sampleValue(before, name, { outcome }) ?? 0),
        ),
        [1, 1, 0],
      );
    } finally {
      await worker.stop(0);
      await hooks.close();
      await good.close();
      await bad.close();
    }
  });

  test('METRICS=off serves none', async () => {
    const off = await otherInstance(ctx, { metricsEnabled: false });
    try {
      assert.equal((await off.call('GET', '/metrics', { key: null })).status, 404);
    } finally {
      await off.close();
    }
  });

  test('METRICS_PORT serves them on a port of their own, and not beside the API', async () => {
    const port = await freePort();
    const apart = await otherInstance(ctx, { metricsPort: port });
    try {
      await apart.app.ready();
      assert.equal((await apart.call('GET', '/metrics', { key: null })).status, 404);
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(response.status, 200);
      assert.ok(parseExposition(await response.text()).length > 0);
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/bundles`)).status, 404);
    } finally {
      await apart.close();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`), 'closed with the app');
  });
});

test('METRICS and METRICS_PORT name their allowed values when wrong', () => {
  assert.throws(
    () => loadConfig({ METRICS: 'yes' }),
    new ConfigError('METRICS is not valid: expected on or off'),
  );
  assert.throws(
    () => loadConfig({ METRICS_PORT: '70000' }),
    new ConfigError(
      'METRICS_PORT is not valid: expected an integer from 0 to 65535, or unset to serve /metrics beside the API',
    ),
  );
  assert.equal(loadConfig({ METRICS: 'off' }).metricsEnabled, false);
  assert.equal(loadConfig({}).metricsPort, null);
});
