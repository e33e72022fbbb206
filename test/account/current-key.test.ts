import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';

describeEachDatabase('GET /v1/keys/current', (ctx) => {
  test('tells a key its id, its account and whether it is read-only or an approver, and never echoes the key', async () => {
    const readWrite = await ctx.call('GET', '/v1/keys/current');
    assert.equal(readWrite.status, 200, readWrite.text);
    assert.deepEqual(Object.keys(readWrite.body).sort(), ['accountId', 'approver', 'keyId', 'readOnly']);
    assert.equal(readWrite.body.accountId, 'acme');
    assert.match(readWrite.body.keyId, /^key_/);
    assert.equal(readWrite.body.readOnly, false);
    assert.equal(readWrite.body.approver, false);
    assert.ok(!readWrite.text.includes(ctx.key));

    const readOnlyKey = await ctx.newKey('globex', { readOnly: true });
    const readOnly = await ctx.call('GET', '/v1/keys/current', { key: readOnlyKey });
    assert.equal(readOnly.status, 200, readOnly.text);
    assert.equal(readOnly.body.accountId, 'globex');
    assert.equal(readOnly.body.readOnly, true);
    assert.notEqual(readOnly.body.keyId, readWrite.body.keyId);

    const approver = await ctx.call('GET', '/v1/keys/current', {
      key: await ctx.newKey('acme', { approver: true }),
    });
    assert.deepEqual([approver.body.readOnly, approver.body.approver], [false, true]);
  });

  test('is 401 without a key or with an unknown one', async () => {
    assertProblem(await ctx.call('GET', '/v1/keys/current', { key: null }), 401, 'unauthorized');
    assertProblem(await ctx.call('GET', '/v1/keys/current', { key: 'cpq_unknown' }), 401, 'unauthorized');
  });
});
