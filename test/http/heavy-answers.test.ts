import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { type App, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { AnswerGate } from '../../src/shared/heavy-answers.ts';
import { limitsOf } from '../../src/shared/scope.ts';
import { assertProblem, callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

test('the answer limits are configurable', () => {
  const config = loadConfig({
    ANSWER_MAX_BYTES: '5000',
    HEAVY_ANSWERS_AT_ONCE: '3',
    HEAVY_ANSWERS_QUEUED: '0',
  });
  assert.deepEqual(
    [config.answerMaxBytes, config.heavyAnswersAtOnce, config.heavyAnswersQueued],
    [5000, 3, 0],
  );
  assert.throws(() => loadConfig({ HEAVY_ANSWERS_AT_ONCE: '0' }), /HEAVY_ANSWERS_AT_ONCE/);
  assert.throws(() => loadConfig({ ANSWER_MAX_BYTES: 'big' }), /ANSWER_MAX_BYTES/);
});

/** Resolves once `done()` holds, checked after each turn of the event loop: a state to reach, not a delay. */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    assert.ok(turn < 100_000, 'the state was never reached');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describeEachDatabase('answers are bounded in size and in how many are built at once', (ctx) => {
  const apps: App[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });
  const appWith = async (options: Parameters<typeof testConfig>[0], gate?: AnswerGate) => {
    const config = testConfig({ detailsCacheBytes: 0, ...options });
    const app = await buildApp({
      config,
      database: ctx.database.handle,
      ...(gate ? { limits: limitsOf(config, gate) } : {}),
    });
    apps.push(app);
    return app;
  };

  test('details over ANSWER_MAX_BYTES are 422 answer_too_large naming the limit; fewer bundles fit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createBundle(ctx)).bundle.id);
    const whole = await ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: ids.join(',') } });
    assert.equal(whole.status, 200);
    const oneBundle = whole.text.length / ids.length;

    // Room for two bundles' answers, not four.
    const app = await appWith({ answerMaxBytes: Math.round(oneBundle * 2.5) });
    const tooLarge = await callApp(app, ctx.key, 'GET', '/v1/bundles-details', {
      query: { bundleIds: ids.join(',') },
    });
    assertProblem(tooLarge, 422, 'answer_too_large');
    assert.match(tooLarge.body.detail, new RegExp(`limit of ${Math.round(oneBundle * 2.5)} bytes`));
    assert.match(tooLarge.body.detail, /ANSWER_MAX_BYTES\); ask for fewer bundles/);
    for (const part of [ids.slice(0, 2), ids.slice(2)]) {
      const fewer = await callApp(app, ctx.key, 'GET', '/v1/bundles-details', {
        query: { bundleIds: part.join(',') },
      });
      assert.equal(fewer.status, 200, fewer.text);
    }

    // Asked property names are repeated in every properties map: a short query asking for a large answer.
    const names = Array.from({ length: 60 }, (_, i) => `p${i}-${'n'.repeat(140)}`).join(',');
    const asked = await callApp(app, ctx.key, 'GET', '/v1/bundles-details', {
      query: { bundleIds: ids[0] as string, properties: names },
    });
    assertProblem(asked, 422, 'answer_too_large');
    assert.match(asked.body.detail, /ask for fewer bundles or properties/);
  });

  test('details and quotes wait at the gate, beyond its queue get 503 with Retry-After; /healthz does not wait', async () => {
    const { bundle } = await createBundle(ctx);
    const gate = new AnswerGate(1, 1);
    const app = await appWith({}, gate);
    let release = () => {};
    const holding = gate.run(() => new Promise<void>((resolve) => (release = resolve)));
    assert.equal(gate.running, 1);

    const details = (query: Record<string, string>) =>
      callApp(app, ctx.key, 'GET', '/v1/bundles-details', { query });
    const queued = details({ bundleIds: bundle.id });
    await until(() => gate.waiting === 1);

    const refused = await details({ bundleIds: bundle.id, properties: 'name' });
    assertProblem(refused, 503, 'service_unavailable');
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.body.detail, /building 1 large answers with 1 more waiting/);
    const quote = await callApp(app, ctx.key, 'POST', '/v1/quotes/price', {
      body: { currency: 'USD', bundles: [{ bundleId: bundle.id, quantity: 1, options: [] }] },
    });
    assertProblem(quote, 503, 'service_unavailable');

    // Cheap requests pass by the full gate.
    assert.equal((await callApp(app, ctx.key, 'GET', '/healthz')).status, 200);
    assert.equal((await callApp(app, ctx.key, 'GET', `/v1/bundles/${bundle.id}`)).status, 200);
    assert.equal(gate.waiting, 1, 'the queued request still waits');

    release();
    await holding;
    const answered = await queued;
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual([gate.running, gate.waiting], [0, 0]);
    assert.equal((await details({ bundleIds: bundle.id, properties: 'name' })).status, 200);
  });

  test('requests that miss together share one build: a burst for one cold bundle passes a gate of one', async () => {
    const { bundle, options } = await createBundle(ctx);
    const base = options[0];
    const productId = base.products[0].productId;
    const priced = await ctx.call('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, {
      body: [{ productId, currency: 'USD', standardPrice: 10 }],
    });
    assert.equal(priced.status, 200, priced.text);
    const quote = {
      currency: 'USD',
      bundles: [
        { bundleId: bundle.id, options: [{ optionId: base.id, products: [{ productId, quantity: 1 }] }] },
      ],
    };
    const gate = new AnswerGate(1, 2);
    const app = await appWith({ detailsCacheBytes: 1_000_000 }, gate);
    let release = () => {};
    const holding = gate.run(() => new Promise<void>((resolve) => (release = resolve)));

    // Twenty of each: without sharing, all but the two the queue holds would be turned away with 503.
    const burst = [
      ...Array.from({ length: 20 }, () =>
        callApp(app, ctx.key, 'GET', '/v1/bundles-details', { query: { bundleIds: bundle.id } }),
      ),
      ...Array.from({ length: 20 }, () => callApp(app, ctx.key, 'POST', '/v1/quotes/price', { body: quote })),
    ];
    await until(() => gate.waiting === 2);
    release();
    await holding;
    const answers = await Promise.all(burst);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(40).fill(200),
    );
    assert.equal(new Set(answers.slice(0, 20).map((answer) => answer.text)).size, 1);
    const metrics = (await callApp(app, ctx.key, 'GET', '/metrics')).text;
    const counted = (name: string, cache: string) =>
      Number(new RegExp(`${name}\\{cache="${cache}"\\} (\\d+)`).exec(metrics)?.[1]);
    for (const cache of ['details', 'quote_catalogues']) {
      // One build served all twenty: those that came while it ran shared it, and any that came after it found it
      // kept (when each request reaches the cache depends on when its key check and stamp check come back).
      assert.equal(counted('cpq_cache_misses_total', cache), 1, cache);
      const shared = counted('cpq_cache_shared_builds_total', cache);
      assert.equal(shared + counted('cpq_cache_hits_total', cache), 19, cache);
      assert.ok(shared >= 1, `${cache}: no request came while the build ran`);
    }
  });
});
