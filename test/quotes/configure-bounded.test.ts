import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pigeonholeOptions, pigeonholeRules } from '../../bench/rules.ts';
import { loadConfig } from '../../src/config.ts';
import {
  assertProblem,
  type CallResult,
  describeEachDatabase,
  otherInstance,
  type TestContext,
} from '../helpers/app.ts';
import { createBundle, expectStatus } from '../helpers/factories.ts';

// C20: no configure request holds up another. Three configure requests on the hardest bundle the limits allow (the
// pigeonhole of 10 options and 9 products, bench/rules.ts) run at once while /healthz and an unrelated bundle are
// read without pause: those reads stay prompt and never fail, each hard request is answered within three budgets of
// CONFIGURE_BUDGET_MS, and a small configure after them is prompt.

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};

describeEachDatabase('configure, bounded', (ctx) => {
  test('three pigeonhole configures at once: reads stay prompt, each is answered within three budgets', async () => {
    // The default budget, on an instance of its own (the tests' own have a generous one).
    const budgetMs = loadConfig({}).configureBudgetMs;
    const { bundle: hard, options } = await createBundle(ctx, { options: pigeonholeOptions(10, 9) });
    for (const rule of pigeonholeRules(
      options.map((o) => o.id),
      9,
    )) {
      expectStatus(
        await ctx.call('POST', `/v1/bundles/${hard.id}/rules`, { body: rule }),
        201,
        'create rule',
      );
    }
    const { bundle: small, options: smallOptions } = await createBundle(ctx, {
      header: { productId: 'HDR-2', properties: {} },
    });

    const service = await otherInstance(ctx, { configureBudgetMs: budgetMs });
    try {
      await checkBounded(service.call);
    } finally {
      await service.close();
    }
    async function checkBounded(call: TestContext['call']) {
      const probes: { ms: number; status: number }[] = [];
      let probing = true;
      const probe = async (into: { ms: number; status: number }[]) => {
        while (probing) {
          for (const url of ['/healthz', `/v1/bundles/${small.id}`]) {
            const started = performance.now();
            const answer = await call('GET', url);
            into.push({ ms: performance.now() - started, status: answer.status });
          }
          await sleep(5);
        }
      };
      // The same reads alone first: what the machine gives them, for the message should the target be missed.
      const alone: { ms: number; status: number }[] = [];
      const aloneDone = probe(alone);
      await sleep(budgetMs);
      probing = false;
      await aloneDone;
      probing = true;
      const probed = probe(probes);
      // Each asks its own state, so none is answered from another's outcome.
      const hardOnes: { answer: CallResult; ms: number }[] = await Promise.all(
        [0, 1, 2].map(async (i) => {
          const started = performance.now();
          const answer = await call('POST', `/v1/bundles/${hard.id}/configure`, {
            body: { selections: [], rejections: [{ optionId: options[i].id, productId: 'HOLE-1' }] },
          });
          return { answer, ms: performance.now() - started };
        }),
      );
      probing = false;
      await probed;

      for (const { answer, ms } of hardOnes) {
        if (answer.status === 200)
          assert.equal(answer.body.valid, false, 'ten options cannot share nine products');
        else assertProblem(answer, 422, 'configuration_too_complex');
        assert.ok(
          ms < 3 * budgetMs,
          `answered in ${ms.toFixed(0)} ms, within three budgets of ${budgetMs} ms`,
        );
      }
      assert.ok(probes.length > 10, `${probes.length} reads while the configures ran`);
      assert.deepEqual(
        probes.filter((p) => p.status !== 200),
        [],
        'every read answered',
      );
      const p99 = quantile(
        probes.map((p) => p.ms),
        0.99,
      );
      const aloneP99 = quantile(
        alone.map((p) => p.ms),
        0.99,
      );
      assert.ok(
        p99 < 50,
        `reads p99 ${p99.toFixed(1)} ms while the configures ran (alone before: ${aloneP99.toFixed(1)} ms)`,
      );

      const started = performance.now();
      const next = await call('POST', `/v1/bundles/${small.id}/configure`, {
        body: { selections: [{ optionId: smallOptions[0].id, productId: 'BASE-L' }] },
      });
      const ms = performance.now() - started;
      assert.equal(next.status, 200, next.text);
      assert.equal(next.body.valid, true);
      assert.ok(ms < 250, `the next small configure took ${ms.toFixed(0)} ms`);
    }
  });
});
