import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

const ruleId = /^rul_[0-9A-HJKMNP-TV-Z]{26}$/;

async function events(ctx: TestContext, after: string | undefined): Promise<Json[]> {
  const query: Record<string, string> = { limit: '100' };
  if (after) query.after = after;
  return (await ctx.call('GET', '/v1/events', { query })).body.events;
}

async function lastEventId(ctx: TestContext): Promise<string | undefined> {
  const all: Json[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await events(ctx, after);
    if (page.length === 0) return all.at(-1)?.id;
    all.push(...page);
    after = page.at(-1).id;
  }
}

/** A bundle of the default options (Base: BASE-S, BASE-L; Extras: EXTRA-WARRANTY, EXTRA-SETUP) and its ids. */
async function setUp(ctx: TestContext, key = ctx.key) {
  const { bundle, options } = await createBundle(ctx, { key });
  const [base, extras] = options;
  return { bundle, base, extras, rules: `/v1/bundles/${bundle.id}/rules` };
}

function largeRule(base: Json, extras: Json) {
  return {
    name: 'Large base needs the warranty',
    kind: 'requires',
    when: {
      all: [
        { optionId: base.id, productId: 'BASE-L' },
        { not: { optionId: extras.id, productId: 'EXTRA-SETUP' } },
      ],
    },
    then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
    message: 'The large base ships with the extended warranty',
  };
}

describeEachDatabase('rules', (ctx) => {
  test('POST creates a rule (201, Location, ETag), GET reads it and the list, PUT replaces it, DELETE removes it', async () => {
    const { bundle, base, extras, rules } = await setUp(ctx);
    const before = await lastEventId(ctx);
    const created = await ctx.call('POST', rules, { body: largeRule(base, extras) });
    assert.equal(created.status, 201, created.text);
    const rule = created.body;
    assert.match(rule.id, ruleId);
    assert.equal(created.headers.location, `${rules}/${rule.id}`);
    assert.equal(created.headers.etag, `"${rule.id}:1"`);
    assert.deepEqual(rule, {
      ...largeRule(base, extras),
      id: rule.id,
      accountId: 'acme',
      bundleId: bundle.id,
      isActive: true,
      displayOrder: 0,
      createdAt: rule.createdAt,
      updatedAt: rule.createdAt,
    });
    const second = await ctx.call('POST', rules, {
      body: {
        name: 'No setup on small',
        kind: 'excludes',
        when: { optionId: base.id, productId: 'BASE-S' },
        then: [{ optionId: extras.id }],
      },
    });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.displayOrder, 1);
    assert.equal(second.body.message, null);

    const read = await ctx.call('GET', `${rules}/${rule.id}`);
    assert.deepEqual(read.body, rule);
    assert.equal(read.headers.etag, `"${rule.id}:1"`);
    assert.deepEqual((await ctx.call('GET', rules)).body, { rules: [rule, second.body] });

    const stale = await ctx.call('PUT', `${rules}/${rule.id}`, {
      body: { ...largeRule(base, extras), kind: 'excludes' },
      headers: { 'if-match': `"${rule.id}:7"` },
    });
    assertProblem(stale, 412, 'precondition_failed');
    const replaced = await ctx.call('PUT', `${rules}/${rule.id}`, {
      body: {
        name: 'Renamed',
        kind: 'excludes',
        when: { optionId: base.id },
        then: [{ optionId: extras.id }],
        isActive: false,
      },
      headers: { 'if-match': `"${rule.id}:1"` },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.headers.etag, `"${rule.id}:2"`);
    assert.deepEqual(replaced.body, {
      ...rule,
      name: 'Renamed',
      kind: 'excludes',
      when: { optionId: base.id },
      then: [{ optionId: extras.id }],
      message: null,
      isActive: false,
      updatedAt: replaced.body.updatedAt,
    });

    assertProblem(
      await ctx.call('DELETE', `${rules}/${rule.id}`, { headers: { 'if-match': `"${rule.id}:1"` } }),
      412,
    );
    const gone = await ctx.call('DELETE', `${rules}/${rule.id}`, {
      headers: { 'if-match': `"${rule.id}:2"` },
    });
    assert.equal(gone.status, 204);
    assertProblem(await ctx.call('GET', `${rules}/${rule.id}`), 404, 'not_found');
    assert.deepEqual(
      (await events(ctx, before)).map((e) => [e.type, e.data.object.id]),
      [
        ['rule.created', rule.id],
        ['rule.created', second.body.id],
        ['rule.updated', rule.id],
        ['rule.deleted', rule.id],
      ],
    );
  });

  test('a POST with an Idempotency-Key is made once and replayed', async () => {
    const { base, extras, rules } = await setUp(ctx);
    const headers = { 'idempotency-key': 'rule-once' };
    const first = await ctx.call('POST', rules, { body: largeRule(base, extras), headers });
    const again = await ctx.call('POST', rules, { body: largeRule(base, extras), headers });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal((await ctx.call('GET', rules)).body.rules.length, 1);
  });

  test('bad rules: 400 for a when deeper than 4 levels or an empty then, 422 unknown_reference with pointers', async () => {
    const { base, extras, rules } = await setUp(ctx);
    const s = { optionId: base.id };
    const fourDeep = { all: [{ any: [{ not: s }] }] };
    const ok = await ctx.call('POST', rules, {
      body: { name: 'deep', kind: 'requires', when: fourDeep, then: [s] },
    });
    assert.equal(ok.status, 201, ok.text);
    const tooDeep = await ctx.call('POST', rules, {
      body: { name: 'deeper', kind: 'requires', when: { not: fourDeep }, then: [s] },
    });
    assertProblem(tooDeep, 400, 'validation_failed');
    assert.ok(
      tooDeep.body.errors.some((e: Json) => e.pointer.startsWith('/when')),
      tooDeep.text,
    );
    const empty = await ctx.call('POST', rules, { body: { name: 'x', kind: 'requires', when: s, then: [] } });
    assertProblem(empty, 400, 'validation_failed');
    assert.ok(
      empty.body.errors.some((e: Json) => e.pointer === '/then'),
      empty.text,
    );
    assertProblem(
      await ctx.call('POST', rules, { body: { name: 'x', kind: 'maybe', when: s, then: [s] } }),
      400,
    );

    const other = await setUp(ctx);
    const unknown = await ctx.call('POST', rules, {
      body: {
        name: 'x',
        kind: 'requires',
        when: { any: [{ optionId: other.base.id }, { optionId: base.id, productId: 'NOPE' }] },
        then: [s, { optionId: extras.id, productId: 'BASE-S' }],
      },
    });
    assertProblem(unknown, 422, 'unknown_reference');
    assert.deepEqual(
      unknown.body.errors.map((e: Json) => e.pointer),
      ['/when/any/0/optionId', '/when/any/1/productId', '/then/1/productId'],
    );
    assert.equal((await ctx.call('GET', rules)).body.rules.length, 1, 'nothing written by a refused rule');
  });

  test('a bundle holds at most 500 rules: the 501st is a 422', async () => {
    const { bundle, base, rules } = await setUp(ctx);
    const now = new Date().toISOString();
    const rows = Array.from({ length: 500 }, (_, i) => ({
      account_id: 'acme',
      id: `rul_FILL${String(i).padStart(22, '0')}`,
      bundle_id: bundle.id,
      name: `r${i}`,
      kind: 'requires' as const,
      when_json: JSON.stringify({ optionId: base.id }),
      then_json: JSON.stringify([{ optionId: base.id }]),
      message: null,
      is_active: true,
      display_order: i,
      version: 1,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 100)
      await ctx.db
        .insertInto('bundle_rules')
        .values(rows.slice(i, i + 100))
        .execute();
    const refused = await ctx.call('POST', rules, {
      body: {
        name: 'one more',
        kind: 'requires',
        when: { optionId: base.id },
        then: [{ optionId: base.id }],
      },
    });
    assertProblem(refused, 422, 'rule_violation');
    assert.equal(refused.body.errors[0].code, 'too_many_rules');
  });

  test('deleting an option or a product takes its selectors out of every rule, and rules left empty with them', async () => {
    const { bundle, base, extras, rules } = await setUp(ctx);
    const made = async (body: Json) => (await ctx.call('POST', rules, { body })).body;
    const warranty = { optionId: extras.id, productId: 'EXTRA-WARRANTY' };
    const setup = { optionId: extras.id, productId: 'EXTRA-SETUP' };
    const large = { optionId: base.id, productId: 'BASE-L' };
    const kept = await made({
      name: 'kept',
      kind: 'requires',
      when: { any: [large, { not: warranty }] },
      then: [setup, large],
    });
    const emptied = await made({ name: 'emptied', kind: 'requires', when: { not: warranty }, then: [large] });
    const thenless = await made({ name: 'thenless', kind: 'excludes', when: large, then: [warranty] });
    const other = await setUp(ctx);
    const elsewhere = await made({ name: 'x', kind: 'requires', when: large, then: [large] });
    const otherRule = (
      await ctx.call('POST', other.rules, {
        body: {
          name: 'other',
          kind: 'requires',
          when: { optionId: other.extras.id, productId: 'EXTRA-WARRANTY' },
          then: [{ optionId: other.base.id }],
        },
      })
    ).body;
    const before = await lastEventId(ctx);

    const removed = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${extras.id}/EXTRA-WARRANTY`);
    assert.equal(removed.status, 200, removed.text);
    const left = (await ctx.call('GET', rules)).body.rules;
    assert.deepEqual(
      left.map((r: Json) => r.id),
      [kept.id, elsewhere.id],
    );
    assert.deepEqual(left[0].when, { any: [large] });
    assert.deepEqual(left[0].then, [setup, large]);
    assert.equal((await ctx.call('GET', `${rules}/${kept.id}`)).headers.etag, `"${kept.id}:2"`);
    assert.deepEqual(
      (await ctx.call('GET', other.rules)).body.rules,
      [otherRule],
      'another bundle keeps its rules',
    );
    assert.deepEqual(
      (await events(ctx, before)).map((e) => `${e.type} ${e.data.object.id}`).sort(),
      [
        `option_products.changed ${extras.id}`,
        `rule.deleted ${emptied.id}`,
        `rule.deleted ${thenless.id}`,
        `rule.updated ${kept.id}`,
      ].sort(),
    );

    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${extras.id}`)).status, 204);
    const afterOption = (await ctx.call('GET', rules)).body.rules;
    assert.deepEqual(
      afterOption.map((r: Json) => [r.id, r.when, r.then]),
      [
        [kept.id, { any: [large] }, [large]],
        [elsewhere.id, large, [large]],
      ],
    );
  });

  test('a bundle clone copies its rules with option ids remapped; an option clone copies none', async () => {
    const { bundle, base, extras, rules } = await setUp(ctx);
    const rule = (await ctx.call('POST', rules, { body: largeRule(base, extras) })).body;
    const clone = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { body: {} });
    assert.equal(clone.status, 201, clone.text);
    const copy = clone.body.id;
    const copiedOptions = await ctx.db
      .selectFrom('bundle_options')
      .select(['id', 'name'])
      .where('bundle_id', '=', copy)
      .execute();
    const idOf = (name: string) => copiedOptions.find((o) => o.name === name)?.id;
    const copied = (await ctx.call('GET', `/v1/bundles/${copy}/rules`)).body.rules;
    assert.equal(copied.length, 1);
    assert.notEqual(copied[0].id, rule.id);
    assert.deepEqual(copied[0], {
      ...largeRule({ id: idOf('Base') }, { id: idOf('Extras') }),
      id: copied[0].id,
      accountId: 'acme',
      bundleId: copy,
      isActive: true,
      displayOrder: 0,
      createdAt: copied[0].createdAt,
      updatedAt: copied[0].createdAt,
    });
    const optionClone = await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${extras.id}/clone`);
    assert.equal(optionClone.status, 201);
    assert.deepEqual((await ctx.call('GET', rules)).body.rules, [rule]);
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}`)).status, 204);
    const orphans = await ctx.db
      .selectFrom('bundle_rules')
      .select('id')
      .where('bundle_id', '=', bundle.id)
      .execute();
    assert.deepEqual(orphans, [], 'a deleted bundle takes its rules');
  });

  test("another account's bundle or rule is a 404; its options in a body are a 422; a read-only key may only read", async () => {
    const { base, extras, rules } = await setUp(ctx);
    const rule = (await ctx.call('POST', rules, { body: largeRule(base, extras) })).body;
    const otherKey = await ctx.newKey('globex');
    const theirs = await setUp(ctx, otherKey);
    for (const [method, url] of [
      ['GET', rules],
      ['GET', `${rules}/${rule.id}`],
      ['DELETE', `${rules}/${rule.id}`],
      ['PUT', `${rules}/${rule.id}`],
      ['POST', rules],
    ] as const) {
      const body = method === 'PUT' || method === 'POST' ? largeRule(theirs.base, theirs.extras) : undefined;
      assertProblem(await ctx.call(method, url, { key: otherKey, body }), 404, 'not_found');
    }
    assertProblem(await ctx.call('GET', `${theirs.rules}/${rule.id}`, { key: otherKey }), 404);
    assertProblem(
      await ctx.call('POST', rules, { body: largeRule(theirs.base, theirs.extras) }),
      422,
      'unknown_reference',
    );
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('GET', rules, { key: readOnly })).status, 200);
    assertProblem(await ctx.call('POST', rules, { key: readOnly, body: largeRule(base, extras) }), 403);
  });
});
