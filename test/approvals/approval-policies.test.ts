import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase, type TestContext } from '../helpers/app.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

const policyId = /^apl_[0-9A-HJKMNP-TV-Z]{26}$/;
const base = '/v1/approval-policies';

const bigDeals = {
  name: 'Big deals',
  when: { totalAbove: { currency: 'USD', amount: 50000 }, quoteDiscountPercentAbove: 15 },
};

async function eventsAfter(ctx: TestContext, after: string | undefined, key = ctx.key): Promise<Json[]> {
  const query: Record<string, string> = {
    limit: '100',
    types: 'approval_policy.created,approval_policy.updated,approval_policy.deleted',
  };
  if (after) query.after = after;
  return (await ctx.call('GET', '/v1/events', { query, key })).body.events;
}

describeEachDatabase('approval policies', (ctx) => {
  test('POST creates (201, Location, ETag), GET reads it and the list, PUT replaces, DELETE removes; events', async () => {
    const before = (await eventsAfter(ctx, undefined)).at(-1)?.id;
    const created = await ctx.call('POST', base, { body: bigDeals });
    assert.equal(created.status, 201, created.text);
    const policy = created.body;
    assert.match(policy.id, policyId);
    assert.equal(created.headers.location, `${base}/${policy.id}`);
    assert.equal(created.headers.etag, `"${policy.id}:1"`);
    assert.deepEqual(policy, {
      ...bigDeals,
      id: policy.id,
      accountId: 'acme',
      isActive: true,
      createdAt: policy.createdAt,
      updatedAt: policy.createdAt,
    });
    const second = await ctx.call('POST', base, {
      body: {
        name: 'Rep prices',
        isActive: false,
        when: { unitPriceEdited: true, lineDiscountPercentAbove: 20.5 },
      },
    });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.isActive, false);

    const read = await ctx.call('GET', `${base}/${policy.id}`);
    assert.deepEqual(read.body, policy);
    assert.equal(read.headers.etag, `"${policy.id}:1"`);
    assert.equal(
      (await ctx.call('GET', `${base}/${policy.id}`, { headers: { 'if-none-match': `"${policy.id}:1"` } }))
        .status,
      304,
    );
    assert.deepEqual((await ctx.call('GET', base)).body, { approvalPolicies: [policy, second.body] });

    const replacement = { name: 'Any discount', when: { lineDiscountPercentAbove: 0 } };
    assertProblem(
      await ctx.call('PUT', `${base}/${policy.id}`, {
        body: replacement,
        headers: { 'if-match': `"${policy.id}:7"` },
      }),
      412,
      'precondition_failed',
    );
    const replaced = await ctx.call('PUT', `${base}/${policy.id}`, {
      body: replacement,
      headers: { 'if-match': `"${policy.id}:1"` },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.headers.etag, `"${policy.id}:2"`);
    assert.deepEqual(replaced.body, {
      ...policy,
      ...replacement,
      isActive: true,
      updatedAt: replaced.body.updatedAt,
    });

    assertProblem(
      await ctx.call('DELETE', `${base}/${policy.id}`, { headers: { 'if-match': `"${policy.id}:1"` } }),
      412,
    );
    const gone = await ctx.call('DELETE', `${base}/${policy.id}`, {
      headers: { 'if-match': `"${policy.id}:2"` },
    });
    assert.equal(gone.status, 204);
    assertProblem(await ctx.call('GET', `${base}/${policy.id}`), 404, 'not_found');
    assertProblem(await ctx.call('DELETE', `${base}/${policy.id}`), 404, 'not_found');

    const events = await eventsAfter(ctx, before);
    assert.deepEqual(
      events.map((e: Json) => [e.type, e.data.object.id]),
      [
        ['approval_policy.created', policy.id],
        ['approval_policy.created', second.body.id],
        ['approval_policy.updated', policy.id],
        ['approval_policy.deleted', policy.id],
      ],
    );
    assert.deepEqual(events[0].data.object, policy);
    assert.deepEqual(events[2].data.object, replaced.body);
    assert.deepEqual(events[3].data.object, { id: policy.id, deleted: true });
  });

  test('a POST with an Idempotency-Key is made once and replayed; another body with it is a 409', async () => {
    const headers = { 'idempotency-key': 'policy-once' };
    const account = await ctx.newKey('idem-policies');
    const first = await ctx.call('POST', base, { key: account, body: bigDeals, headers });
    const again = await ctx.call('POST', base, { key: account, body: bigDeals, headers });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal((await ctx.call('GET', base, { key: account })).body.approvalPolicies.length, 1);
    assertProblem(
      await ctx.call('POST', base, { key: account, body: { ...bigDeals, name: 'Other' }, headers }),
      409,
      'idempotency_key_reused',
    );
  });

  test('bad policies: 400 with a pointer for ranges and decimal places, 422 for a policy with no condition', async () => {
    const bad: [Json, number, string, string][] = [
      [
        { ...bigDeals, when: { lineDiscountPercentAbove: 100 } },
        400,
        'validation_failed',
        '/when/lineDiscountPercentAbove',
      ],
      [
        { ...bigDeals, when: { quoteDiscountPercentAbove: -1 } },
        400,
        'validation_failed',
        '/when/quoteDiscountPercentAbove',
      ],
      [
        { ...bigDeals, when: { lineDiscountPercentAbove: 10.005 } },
        400,
        'validation_failed',
        '/when/lineDiscountPercentAbove',
      ],
      [
        { ...bigDeals, when: { totalAbove: { currency: 'usd', amount: 1 } } },
        400,
        'validation_failed',
        '/when/totalAbove/currency',
      ],
      [
        { ...bigDeals, when: { totalAbove: { currency: 'USD', amount: 1.0000001 } } },
        400,
        'validation_failed',
        '/when/totalAbove/amount',
      ],
      [
        { ...bigDeals, when: { totalAbove: { currency: 'USD' } } },
        400,
        'validation_failed',
        '/when/totalAbove/amount',
      ],
      [{ ...bigDeals, when: { discountAbove: 5 } }, 400, 'validation_failed', '/when/discountAbove'],
      [{ ...bigDeals, name: '' }, 400, 'validation_failed', '/name'],
      [{ ...bigDeals, when: {} }, 422, 'rule_violation', '/when'],
      [{ ...bigDeals, when: { unitPriceEdited: false } }, 422, 'rule_violation', '/when'],
    ];
    for (const [body, status, code, pointer] of bad) {
      const result = await ctx.call('POST', base, { body });
      assertProblem(result, status, code);
      assert.ok(
        result.body.errors.some((e: Json) => e.pointer === pointer),
        `${JSON.stringify(body.when)}: ${JSON.stringify(result.body.errors)}`,
      );
    }
    const limits = await ctx.call('POST', base, {
      body: {
        name: 'At the edges',
        when: {
          lineDiscountPercentAbove: 99.99,
          quoteDiscountPercentAbove: 0,
          totalAbove: { currency: 'JPY', amount: 0.000001 },
        },
      },
    });
    assert.equal(limits.status, 201, limits.text);
  });

  test("tenancy: another account's policy is a 404 to read, replace and delete; lists are the account's own", async () => {
    const mine = (await ctx.call('POST', base, { body: bigDeals })).body;
    const otherKey = await ctx.newKey('globex-policies');
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', bigDeals],
      ['DELETE', undefined],
    ] as const) {
      assertProblem(await ctx.call(method, `${base}/${mine.id}`, { key: otherKey, body }), 404, 'not_found');
    }
    assert.deepEqual((await ctx.call('GET', base, { key: otherKey })).body, { approvalPolicies: [] });
    assert.deepEqual(await eventsAfter(ctx, undefined, otherKey), []);
    assert.equal((await ctx.call('GET', `${base}/${mine.id}`)).status, 200, 'still there for its owner');
  });

  test('a read-only key reads but gets 403 on every write; an approver key writes', async () => {
    const made = (await ctx.call('POST', base, { body: bigDeals })).body;
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('GET', base, { key: readOnly })).status, 200);
    assert.equal((await ctx.call('GET', `${base}/${made.id}`, { key: readOnly })).status, 200);
    assertProblem(await ctx.call('POST', base, { key: readOnly, body: bigDeals }), 403, 'forbidden');
    assertProblem(
      await ctx.call('PUT', `${base}/${made.id}`, { key: readOnly, body: bigDeals }),
      403,
      'forbidden',
    );
    assertProblem(await ctx.call('DELETE', `${base}/${made.id}`, { key: readOnly }), 403, 'forbidden');
    const approver = await ctx.newKey('acme', { approver: true });
    assert.equal(
      (await ctx.call('PUT', `${base}/${made.id}`, { key: approver, body: bigDeals })).status,
      200,
    );
  });

  test('an account holds at most 100 policies: the 101st is a 422', async () => {
    const key = await ctx.newKey('many-policies');
    for (let i = 0; i < 100; i++) {
      const made = await ctx.call('POST', base, { key, body: { ...bigDeals, name: `p${i}` } });
      assert.equal(made.status, 201, made.text);
    }
    assertProblem(await ctx.call('POST', base, { key, body: bigDeals }), 422, 'rule_violation');
  });
});
