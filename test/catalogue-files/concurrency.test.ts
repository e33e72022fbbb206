import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { randomCatalogue } from './random-catalogue.ts';
import { apply, exportText } from './round-trip.ts';

// An apply and other writes at once, from two instances (each with its own connection, as two processes have):
// they queue on the bundles' locks; a write that lost the race gets a conflict (409) or a stale If-Match (412),
// and the catalogue is always one write's whole result, never part of an apply.
/** The bundles of an export by key: bundles kept from before an apply come before the ones it made. */
const byKey = (text: string) =>
  new Map(JSON.parse(text).bundles.map((b: { key: string }) => [b.key, b]) as [string, unknown][]);

describeEachDatabase('catalogue apply beside other writes', (ctx) => {
  const target = randomCatalogue(77, { bundles: 12 });
  const start = randomCatalogue(78, { bundles: 12 });
  // The export of an account made from the file alone: what any account ends as once the file is applied last.
  let expected = '';

  test('the file alone, for comparison', async () => {
    const key = await ctx.newKey('alone');
    await apply(ctx.call, key, target);
    expected = await exportText(ctx.call, key);
  });

  test('apply against PATCH with If-Match of every bundle: each PATCH is applied first or refused', async () => {
    const other = await otherInstance(ctx);
    try {
      for (let round = 0; round < 3; round++) {
        const key = await ctx.newKey(`patch-${round}`);
        await apply(ctx.call, key, start, '?prune=true');
        const bundles = (await ctx.call('GET', '/v1/bundles?limit=100', { key })).body.bundles;
        const tags = await Promise.all(
          bundles.map(
            async (b: { id: string }) => (await ctx.call('GET', `/v1/bundles/${b.id}`, { key })).headers.etag,
          ),
        );
        const patches = bundles.map((b: { id: string; header: { productId: string } }, i: number) =>
          other.call('PATCH', `/v1/bundles/${b.id}`, {
            key,
            headers: { 'if-match': String(tags[i]) },
            body: {
              isActive: true,
              header: { productId: b.header.productId, properties: { patched: 'yes' } },
            },
          }),
        );
        // Every other round lets a PATCH land before the apply starts, so both orders are met.
        if (round % 2 === 1) await patches[0];
        const [applied, ...patched] = await Promise.all([
          ctx.call('POST', '/v1/catalogue/apply?prune=true', { key, body: target }),
          ...patches,
        ]);
        if (round % 2 === 1) assert.ok(patched.some((r) => r.status === 200));
        assert.equal(applied.status, 200, applied.text.slice(0, 300));
        // A PATCH that won went first, and the file overwrote it; one that lost changed nothing (412), or found its
        // bundle pruned (404).
        for (const result of patched)
          assert.ok([200, 404, 412].includes(result.status), result.text.slice(0, 300));
        assert.deepEqual(byKey(await exportText(ctx.call, key)), byKey(expected));
      }
    } finally {
      await other.close();
    }
  });

  test('two applies creating the same bundles: one wins whole, the other applies after it or gets 409', async () => {
    const other = await otherInstance(ctx);
    try {
      for (let round = 0; round < 3; round++) {
        const key = await ctx.newKey(`twice-${round}`);
        const results = await Promise.all([
          ctx.call('POST', '/v1/catalogue/apply', { key, body: target }),
          other.call('POST', '/v1/catalogue/apply', { key, body: target }),
        ]);
        const statuses = results.map((r) => r.status).sort();
        assert.ok(statuses[0] === 200 && [200, 409].includes(statuses[1] as number), String(statuses));
        const lost = results.find((r) => r.status === 409);
        if (lost) assert.equal(lost.body.code, 'conflict');
        assert.equal(await exportText(ctx.call, key), expected);
      }
    } finally {
      await other.close();
    }
  });

  test('apply against bundle deletes: each bundle is the file’s or gone, never part of the file', async () => {
    const other = await otherInstance(ctx);
    try {
      const key = await ctx.newKey('deletes');
      await apply(ctx.call, key, start, '?prune=true');
      const bundles = (await ctx.call('GET', '/v1/bundles?limit=100', { key })).body.bundles;
      const [applied, ...deleted] = await Promise.all([
        ctx.call('POST', '/v1/catalogue/apply?prune=true', { key, body: target }),
        ...bundles.map((b: { id: string }) => other.call('DELETE', `/v1/bundles/${b.id}`, { key })),
      ]);
      assert.equal(applied.status, 200, applied.text.slice(0, 300));
      for (const result of deleted) assert.ok([204, 404].includes(result.status), result.text.slice(0, 300));
      const whole = byKey(expected);
      for (const bundle of JSON.parse(await exportText(ctx.call, key)).bundles) {
        assert.deepEqual(bundle, whole.get(bundle.key));
      }
    } finally {
      await other.close();
    }
  });
});
