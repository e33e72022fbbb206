import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';

describeEachDatabase('operational endpoints', (ctx) => {
  test('healthz and readyz answer without a key', async () => {
    const health = await ctx.call('GET', '/healthz', { key: null });
    assert.equal(health.status, 200);
    const ready = await ctx.call('GET', '/readyz', { key: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready', database: ctx.dialect });
  });
});
