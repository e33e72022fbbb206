import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { type Metric, Registry } from 'prom-client';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { RequestDurations } from '../../src/http/metrics.ts';
import { DISABLE_AFTER_MS } from '../../src/webhooks/webhooks.worker.ts';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { drain, fakeClock, privateApp, startReceiver, testWorker, write } from '../webhooks/support.ts';

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

test('request durations: cumulative buckets by bound, +Inf, sum and count, in the Prometheus text format', async () => {
  const registry = new Registry();
  const durations = new RequestDurations('d_seconds', 'durations', [0.001, 0.01, 1]);
  registry.registerMetric(durations as unknown as Metric);
  for (const seconds of [0.0005, 0.001, 0.003, 0.5, 20]) durations.observe('GET', '/v1/x/:id', 200, seconds);
  durations.observe('POST', '/v1/x', 422, 0.002);
  const samples = parseExposition(await registry.metrics());
  const get = { method: 'GET', route: '/v1/x/:id', status_code: '200' };
  const buckets = ['0.001', '0.01', '1', '+Inf'].map((le) =>
    sampleValue(samples, 'd_seconds_bucket', { ...get, le }),
  );
  // A value on a bound counts in that bound's bucket (le: less than or equal).
  assert.deepEqual(buckets, [2, 3, 4, 5]);
  assert.equal(sampleValue(samples, 'd_seconds_count', get), 5);
  assert.ok(Math.abs((sampleValue(samples, 'd_seconds_sum', get) ?? 0) - 20.5045) < 1e-9);
  assert.equal(
    sampleValue(samples, 'd_seconds_bucket', {
      method: 'POST',
      route: '/v1/x',
      status_code: '422',
      le: '0.001',
    }),
    0,
  );
  assert.equal(sampleValue(samples, 'd_seconds_count', { status_code: '422' }), 1);
  assert.match(await registry.metrics(), /^# TYPE d_seconds histogram$/m);
});

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
