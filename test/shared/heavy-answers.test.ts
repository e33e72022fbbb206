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

test('the gate is shared by account: turns go round the accounts, and a full queue makes room for another', async () => {
  const gate = new AnswerGate(1, 4);
  const order: string[] = [];
  let release = () => {};
  const holding = gate.run('a', () => new Promise<void>((resolve) => (release = resolve)));
  const settle = (account: string, n: number) =>
    gate
      .run(account, async () => void order.push(`${account}${n}`))
      .then(
        () => 'built',
        (error: Error) => error.message,
      );
  const fromA = [1, 2, 3, 4, 5].map((n) => settle('a', n));
  assert.equal(gate.waiting, 4);
  assert.match(await (fromA[4] as Promise<string>), /building 1 large answers with 4 more waiting/);
  // b takes the places of a's newest waiters, until each has as many waiting as the other.
  const fromB = [1, 2, 3].map((n) => settle('b', n));
  assert.equal(gate.waiting, 4);
  assert.match(await (fromA[3] as Promise<string>), /try again shortly/);
  assert.match(await (fromA[2] as Promise<string>), /try again shortly/);
  assert.match(await (fromB[2] as Promise<string>), /try again shortly/, 'b holds no more than its share');
  release();
  await holding;
  assert.deepEqual(await Promise.all([fromA[0], fromA[1], fromB[0], fromB[1]]), Array(4).fill('built'));
  assert.deepEqual(order, ['a1', 'b1', 'a2', 'b2'], 'turns alternate');
  assert.deepEqual([gate.running, gate.waiting], [0, 0]);
});

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
    const holding = gate.run('holder', () => new Promise<void>((resolve) => (release = resolve)));
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

  test('one account’s key holding the queue: another account’s uncached reads wait their turn, never 503', async () => {
    const { bundle } = await createBundle(ctx);
    const otherKey = await ctx.newKey('fair-other');
    const other = await createBundle(ctx, { key: otherKey });
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    const gate = new AnswerGate(1, 8);
    const app = await appWith({}, gate);
    let release = () => {};
    const holding = gate.run('acme', () => new Promise<void>((resolve) => (release = resolve)));
    // Each asks for another instant, so none is answered from a cache or shares another's build.
    const details = (key: string, bundleId: string, n: number) =>
      callApp(app, key, 'GET', '/v1/bundles-details', {
        query: { bundleIds: bundleId, at: new Date(Date.UTC(2020, 0, 1, 0, 0, n)).toISOString() },
      });
    const flood: { status?: number }[] = [];
    const flooding = Array.from({ length: 20 }, (_, n) =>
      details(readOnly, bundle.id, n).then((answer) => flood.push(answer)),
    );
    await until(() => gate.waiting === 8);
    const refused = () => flood.filter((answer) => answer.status === 503).length;
    await until(() => refused() === 12);
    const reads = Array.from({ length: 4 }, (_, n) => details(otherKey, other.bundle.id, n));
    // Each of the other account's reads takes the place of one of acme's in the queue.
    await until(() => refused() === 16);
    release();
    await holding;
    const answered = await Promise.all(reads);
    assert.deepEqual(
      answered.map((answer) => answer.status),
      [200, 200, 200, 200],
      answered.map((answer) => answer.text.slice(0, 200)).join('\n'),
    );
    await Promise.all(flooding);
    assert.equal(
      flood.filter((answer) => answer.status === 200).length,
      4,
      'acme kept its share of the queue',
    );
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
    const holding = gate.run('holder', () => new Promise<void>((resolve) => (release = resolve)));

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
