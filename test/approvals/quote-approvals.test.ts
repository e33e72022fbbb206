// Approvals of saved quotes (contract C19): submit against the account's policies, approve and reject by an
// approver other than the submitter, edits voiding, finalize needing approval, history across revisions, tenancy
// and races.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { decideQuote } from '../../src/quotes/quote-approvals.service.ts';
import { makeScope } from '../../src/shared/scope.ts';
import {
  assertProblem,
  type CallResult,
  describeEachDatabase,
  otherInstance,
  type TestContext,
} from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

function ok(result: CallResult, status: number, what = ''): Json {
  assert.equal(result.status, status, `${what} ${result.text.slice(0, 600)}`);
  return result.body;
}

let tenants = 0;

/**
 * An account of its own: a rep's plain key, two approver keys (Dana, Eve), a bundle priced in USD (BASE-S at 100;
 * BASE-L at 250 with unit price editing; EXTRA-WARRANTY at 50) and the given approval policies.
 */
async function tenant(ctx: TestContext, policies: Json[] = []) {
  const account = `approvals-${++tenants}`;
  const rep = await ctx.newKey(account, { name: 'Rep' });
  const dana = await ctx.newKey(account, { approver: true, name: 'Dana' });
  const eve = await ctx.newKey(account, { approver: true, name: 'Eve' });
  const { bundle, options } = await createBundle(ctx, { key: rep });
  const [base, extras] = options;
  ok(
    await ctx.call('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, {
      key: rep,
      body: [
        { productId: 'BASE-S', currency: 'USD', listPrice: 100 },
        { productId: 'BASE-L', currency: 'USD', listPrice: 250, allowUnitPriceEditing: true },
      ],
    }),
    200,
  );
  ok(
    await ctx.call('PUT', `/v1/pricebooks/${extras.priceBookId}/prices`, {
      key: rep,
      body: [{ productId: 'EXTRA-WARRANTY', currency: 'USD', listPrice: 50 }],
    }),
    200,
  );
  const made = [];
  for (const policy of policies) {
    made.push(ok(await ctx.call('POST', '/v1/approval-policies', { key: rep, body: policy }), 201, 'policy'));
  }
  /** BASE-S x2 at `discount`% and the warranty at list: list 250; at 15%, total 220 (a 12% quote discount). */
  const body = (base0: Json = { productId: 'BASE-S', quantity: 2, discountPercent: 15 }): Json => ({
    currency: 'USD',
    bundles: [
      {
        bundleId: bundle.id,
        options: [
          { optionId: base.id, products: [base0] },
          { optionId: extras.id, products: [{ productId: 'EXTRA-WARRANTY', quantity: 1 }] },
        ],
      },
    ],
  });
  const as = (key: string) => ({
    call: (
      method: 'GET' | 'POST' | 'PUT' | 'PATCH',
      url: string,
      options: { body?: unknown; headers?: Record<string, string> } = {},
    ) => ctx.call(method, url, { key, ...options }),
  });
  const newQuote = async (quoteBody: Json = body()) =>
    ok(await ctx.call('POST', '/v1/quotes', { key: rep, body: quoteBody }), 201, 'create quote');
  const act = (
    key: string,
    id: string,
    action: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) => ctx.call('POST', `/v1/quotes/${id}/${action}`, { key, ...options });
  return { account, rep, dana, eve, policies: made, body, as, newQuote, act };
}

async function submitted(t: Awaited<ReturnType<typeof tenant>>, quoteBody?: Json): Promise<Json> {
  const quote = await t.newQuote(quoteBody);
  return ok(await t.act(t.rep, quote.id, 'submit'), 200, 'submit');
}

describeEachDatabase('approvals of quotes', (ctx) => {
  // A second instance on the same database, as a second process would be: the races run across the two.
  let other: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    other = await otherInstance(ctx);
  });

  after(async () => {
    await other?.close();
  });

  test('with no policy, or none that matches, submit goes straight to approved with no approvals', async () => {
    const none = await tenant(ctx);
    const quote = await submitted(none);
    assert.equal(quote.status, 'approved');
    assert.deepEqual(quote.approvals, []);
    const far = await tenant(ctx, [{ name: 'Far', when: { lineDiscountPercentAbove: 50 } }]);
    assert.equal((await submitted(far)).status, 'approved');
  });

  test('each condition at its threshold does not match, and just below the quote it does', async () => {
    // The quote: a 15% line discount, a 12% quote discount, a total of 220 USD; then a rep-set unit price.
    const cases: [Json, Json, string][] = [
      [
        { lineDiscountPercentAbove: 15 },
        { lineDiscountPercentAbove: 14.99 },
        'line discount above 14.99%: line 1 at 15%',
      ],
      [
        { quoteDiscountPercentAbove: 12 },
        { quoteDiscountPercentAbove: 11.99 },
        'quote discount 12% is above 11.99%',
      ],
      [
        { totalAbove: { currency: 'USD', amount: 220 } },
        { totalAbove: { currency: 'USD', amount: 219.99 } },
        'total 220 USD is above 219.99 USD',
      ],
    ];
    for (const [at, below, reason] of cases) {
      const atThreshold = await tenant(ctx, [{ name: 'At', when: at }]);
      const quote = await submitted(atThreshold);
      assert.equal(quote.status, 'approved', JSON.stringify(at));
      const justBelow = await tenant(ctx, [{ name: 'Below', when: below }]);
      const pending = await submitted(justBelow);
      assert.equal(pending.status, 'pending_approval', JSON.stringify(below));
      assert.deepEqual(pending.approvals, [
        {
          policyId: justBelow.policies[0].id,
          reason,
          decision: 'pending',
          keyId: null,
          keyName: null,
          comment: null,
          at: pending.submittedAt,
          quoteVersion: 1,
        },
      ]);
    }
  });

  test('a total threshold in another currency never matches; a rep-set unit price matches unitPriceEdited', async () => {
    const euro = await tenant(ctx, [{ name: 'Euro', when: { totalAbove: { currency: 'EUR', amount: 0 } } }]);
    assert.equal((await submitted(euro)).status, 'approved');

    const edited = await tenant(ctx, [{ name: 'Rep prices', when: { unitPriceEdited: true } }]);
    assert.equal(
      (await submitted(edited, edited.body({ productId: 'BASE-L', quantity: 1 }))).status,
      'approved',
    );
    // The same price as the list, set by the rep: still set by the rep.
    const pending = await submitted(
      edited,
      edited.body({ productId: 'BASE-L', quantity: 1, unitPrice: 250 }),
    );
    assert.equal(pending.status, 'pending_approval');
    assert.equal(pending.approvals[0].reason, 'unit price set by the rep on line 1');
  });

  test('inactive policies never match; every active one that matches is listed, in id order', async () => {
    const t = await tenant(ctx, [
      { name: 'Off', isActive: false, when: { lineDiscountPercentAbove: 0 } },
      { name: 'Lines', when: { lineDiscountPercentAbove: 10 } },
      { name: 'Not this', when: { quoteDiscountPercentAbove: 50 } },
      { name: 'Total', when: { totalAbove: { currency: 'USD', amount: 100 }, unitPriceEdited: true } },
    ]);
    const quote = await submitted(t);
    assert.deepEqual(
      quote.approvals.map((a: Json) => [a.policyId, a.reason]),
      [
        [t.policies[1].id, 'line discount above 10%: line 1 at 15%'],
        [t.policies[3].id, 'total 220 USD is above 100 USD'],
      ],
    );
    const off = await tenant(ctx, [
      { name: 'Off', isActive: false, when: { unitPriceEdited: true, lineDiscountPercentAbove: 0 } },
    ]);
    assert.equal((await submitted(off)).status, 'approved');
  });

  test('approve: only an approver other than the submitter; then finalize; events name each step', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const readOnly = await ctx.newKey(t.account, { readOnly: true });
    const quote = await t.newQuote();
    // The approver Dana submits; she may not approve what she submitted.
    const pending = ok(await t.act(t.dana, quote.id, 'submit'), 200);
    assert.equal(pending.status, 'pending_approval');
    assertProblem(await t.act(t.dana, quote.id, 'finalize'), 409, 'invalid_transition');
    assertProblem(await t.act(t.dana, quote.id, 'approve'), 403, 'forbidden');
    assertProblem(await t.act(t.rep, quote.id, 'approve'), 403, 'forbidden');
    assertProblem(await t.act(t.rep, quote.id, 'reject'), 403, 'forbidden');
    assertProblem(await t.act(readOnly, quote.id, 'approve'), 403, 'forbidden');
    assertProblem(await t.act(readOnly, quote.id, 'reject'), 403, 'forbidden');
    assert.equal(ok(await t.as(t.rep).call('GET', `/v1/quotes/${quote.id}`), 200).status, 'pending_approval');

    const approved = await t.act(t.eve, quote.id, 'approve', { body: { comment: 'Strategic account' } });
    const value = ok(approved, 200, 'approve');
    assert.equal(value.status, 'approved');
    assert.match(String(approved.headers.etag), new RegExp(`^"${quote.id}:\\d+"$`));
    const [entry] = value.approvals;
    assert.equal(entry.decision, 'approved');
    assert.equal(entry.keyName, 'Eve');
    assert.match(entry.keyId, /^key_/);
    assert.equal(entry.comment, 'Strategic account');
    assert.ok(entry.at >= pending.submittedAt);
    assertProblem(await t.act(t.dana, quote.id, 'approve'), 409, 'invalid_transition');
    const open = ok(await t.act(t.rep, quote.id, 'finalize'), 200, 'finalize');
    assert.equal(open.status, 'open');
    assert.deepEqual(open.approvals, value.approvals);

    const events = ok(
      await ctx.call('GET', '/v1/events', {
        key: t.rep,
        query: { types: 'quote.submitted,quote.approved,quote.rejected,quote.finalized', limit: '100' },
      }),
      200,
    ).events;
    assert.deepEqual(
      events.map((e: Json) => [e.type, e.data.object.status]),
      [
        ['quote.submitted', 'pending_approval'],
        ['quote.approved', 'approved'],
        ['quote.finalized', 'open'],
      ],
    );
    assert.deepEqual(events[1].data.object.approvals, value.approvals);
  });

  test('reject returns the quote to draft with the comment; finalize needs approved; submitting again asks again', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const pending = await submitted(t);
    const rejected = ok(
      await t.act(t.dana, pending.id, 'reject', { body: { comment: 'Too deep: 10% at most' } }),
      200,
      'reject',
    );
    assert.equal(rejected.status, 'draft');
    assert.deepEqual(
      rejected.approvals.map((a: Json) => [a.decision, a.keyName, a.comment]),
      [['rejected', 'Dana', 'Too deep: 10% at most']],
    );
    assertProblem(await t.act(t.rep, pending.id, 'finalize'), 409, 'invalid_transition');
    assertProblem(await t.act(t.eve, pending.id, 'approve'), 409, 'invalid_transition');
    assertProblem(await t.act(t.eve, pending.id, 'reject'), 409, 'invalid_transition');

    // A reject without a body, and one with an empty or unknown field.
    const again = ok(await t.act(t.rep, pending.id, 'submit'), 200);
    assert.deepEqual(
      again.approvals.map((a: Json) => a.decision),
      ['rejected', 'pending'],
    );
    assertProblem(
      await t.act(t.dana, pending.id, 'reject', { body: { comment: '' } }),
      400,
      'validation_failed',
    );
    assertProblem(
      await t.act(t.dana, pending.id, 'reject', { body: { why: 'x' } }),
      400,
      'validation_failed',
    );
    const bare = ok(await t.act(t.dana, pending.id, 'reject'), 200, 'reject without a body');
    assert.deepEqual(
      bare.approvals.map((a: Json) => [a.decision, a.comment]),
      [
        ['rejected', 'Too deep: 10% at most'],
        ['rejected', null],
      ],
    );

    // Fixed below the threshold, it is approved at submit, and finalizes.
    const fixed = ok(
      await t.as(t.rep).call('PUT', `/v1/quotes/${pending.id}`, {
        body: t.body({ productId: 'BASE-S', quantity: 2, discountPercent: 10 }),
      }),
      200,
    );
    assert.equal(fixed.status, 'draft');
    const approved = ok(await t.act(t.rep, pending.id, 'submit'), 200);
    assert.equal(approved.status, 'approved');
    assert.equal(approved.approvals.length, 2, 'nothing asked, the history kept');
    ok(await t.act(t.rep, pending.id, 'finalize'), 200);
  });

  test('editing a pending_approval or approved quote voids what stood and returns it to draft', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const pending = await submitted(t);
    const edited = ok(
      await t.as(t.rep).call('PATCH', `/v1/quotes/${pending.id}`, { body: { title: 'New title' } }),
      200,
    );
    assert.equal(edited.status, 'draft');
    assert.deepEqual(
      edited.approvals.map((a: Json) => [a.decision, a.keyName]),
      [['voided', 'Rep']],
    );
    assertProblem(await t.act(t.dana, pending.id, 'approve'), 409, 'invalid_transition');

    ok(await t.act(t.rep, pending.id, 'submit'), 200);
    ok(await t.act(t.dana, pending.id, 'approve'), 200);
    const changed = ok(
      await t.as(t.rep).call('PUT', `/v1/quotes/${pending.id}`, {
        body: t.body({ productId: 'BASE-S', quantity: 3, discountPercent: 15 }),
      }),
      200,
    );
    assert.equal(changed.status, 'draft');
    assert.deepEqual(
      changed.approvals.map((a: Json) => [a.decision, a.keyName]),
      [
        ['voided', 'Rep'],
        ['voided', 'Rep'],
      ],
    );
    assertProblem(await t.act(t.rep, pending.id, 'finalize'), 409, 'invalid_transition');
  });

  test('the history stays with the quote number across revisions; a decision touches only its own version', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const first = await submitted(t);
    ok(await t.act(t.dana, first.id, 'approve', { body: { comment: 'v1 ok' } }), 200);
    ok(await t.act(t.rep, first.id, 'finalize'), 200);
    const revision = ok(await t.act(t.rep, first.id, 'revise'), 201, 'revise');
    assert.equal(revision.number, first.number);
    assert.equal(revision.version, 2);
    assert.deepEqual(
      revision.approvals.map((a: Json) => [a.quoteVersion, a.decision, a.comment]),
      [[1, 'approved', 'v1 ok']],
    );
    const second = ok(await t.act(t.rep, revision.id, 'submit'), 200);
    assert.equal(second.status, 'pending_approval', 'a new version is asked again');
    const decided = ok(await t.act(t.eve, revision.id, 'reject', { body: { comment: 'v2 no' } }), 200);
    assert.deepEqual(
      decided.approvals.map((a: Json) => [a.quoteVersion, a.decision, a.keyName, a.comment]),
      [
        [1, 'approved', 'Dana', 'v1 ok'],
        [2, 'rejected', 'Eve', 'v2 no'],
      ],
    );
  });

  test('If-Match pins the version decided: a stale one is 412 and changes nothing', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const quote = await t.newQuote();
    const submit = await t.act(t.rep, quote.id, 'submit');
    const reviewed = String(submit.headers.etag);
    ok(
      await t.as(t.rep).call('PATCH', `/v1/quotes/${quote.id}`, { body: { notes: 'changed after review' } }),
      200,
    );
    ok(await t.act(t.rep, quote.id, 'submit'), 200);
    assertProblem(
      await t.act(t.dana, quote.id, 'approve', { headers: { 'if-match': reviewed } }),
      412,
      'precondition_failed',
    );
    const current = await t.as(t.rep).call('GET', `/v1/quotes/${quote.id}`);
    assert.equal(current.body.status, 'pending_approval');
    const approved = ok(
      await t.act(t.dana, quote.id, 'approve', { headers: { 'if-match': String(current.headers.etag) } }),
      200,
    );
    assert.equal(approved.status, 'approved');
  });

  test('tenancy: another account’s quote is a 404 to its approvers, and its policies never apply here', async () => {
    const mine = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const theirs = await tenant(ctx, [
      { name: 'Everything', when: { lineDiscountPercentAbove: 0, unitPriceEdited: true } },
    ]);
    const pending = await submitted(mine);
    for (const action of ['approve', 'reject']) {
      assertProblem(await mine.act(theirs.dana, pending.id, action), 404, 'not_found');
    }
    assert.equal(
      (await mine.as(mine.rep).call('GET', `/v1/quotes/${pending.id}`)).body.status,
      'pending_approval',
    );
    const relaxed = await tenant(ctx);
    assert.equal((await submitted(relaxed)).status, 'approved', "another account's policies do not apply");
    for (const policy of theirs.policies) {
      assertProblem(await ctx.call('GET', `/v1/approval-policies/${policy.id}`, { key: mine.rep }), 404);
    }
  });

  test('two approvers deciding at once through two instances: one wins, the other gets 409, one event', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    for (let round = 0; round < 8; round++) {
      const pending = await submitted(t);
      const [a, b] = await Promise.all([
        t.act(t.dana, pending.id, 'approve'),
        other.call('POST', `/v1/quotes/${pending.id}/${round % 2 === 0 ? 'approve' : 'reject'}`, {
          key: t.eve,
        }),
      ]);
      const statuses = [a.status, b.status].sort();
      assert.deepEqual(
        statuses,
        [200, 409],
        `round ${round}: ${a.text.slice(0, 200)} ${b.text.slice(0, 200)}`,
      );
      const loser = a.status === 409 ? a : b;
      assert.ok(['invalid_transition', 'conflict'].includes(loser.body.code), loser.text);
      const final = (await t.as(t.rep).call('GET', `/v1/quotes/${pending.id}`)).body;
      const winner = a.status === 200 ? a.body : b.body;
      assert.equal(final.status, winner.status);
      assert.deepEqual(final.approvals, winner.approvals);
      const decisions = final.approvals.filter((e: Json) => e.decision !== 'pending');
      assert.equal(decisions.length, 1);
      const events = ok(
        await ctx.call('GET', '/v1/events', {
          key: t.rep,
          query: { types: 'quote.approved,quote.rejected', limit: '100' },
        }),
        200,
      ).events.filter((e: Json) => e.data.object.id === pending.id);
      assert.equal(events.length, 1, `round ${round}: one decision, one event`);
    }
  });

  test('an approval read before an edit and a new submit, stored after them, is refused: the version is compared', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    const pending = await submitted(t);
    const dana = ok(await ctx.call('GET', '/v1/keys/current', { key: t.dana }), 200);
    // The database, but the approval's transaction opens only once the rep has edited and submitted again: the
    // approval was worked out from the quote as first submitted, and must not land on the new one.
    const interleaved = new Proxy(ctx.db, {
      get(target, property) {
        if (property === 'transaction') {
          return () => ({
            execute: async (work: never) => {
              ok(
                await ctx.call('PUT', `/v1/quotes/${pending.id}`, {
                  key: t.rep,
                  body: t.body({ productId: 'BASE-S', quantity: 5, discountPercent: 30 }),
                }),
                200,
              );
              ok(await t.act(t.rep, pending.id, 'submit'), 200);
              return target.transaction().execute(work);
            },
          });
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Db;
    const scope = makeScope({
      db: interleaved,
      account: { id: t.account, keyId: dana.keyId, readOnly: false, approver: true, keyName: 'Dana' },
    });
    await assert.rejects(
      decideQuote(scope, { quoteId: pending.id, action: 'approve', comment: null, expected: null }),
      (error: Error & { code?: string }) => error.code === 'conflict',
    );
    const after = ok(await ctx.call('GET', `/v1/quotes/${pending.id}`, { key: t.rep }), 200);
    assert.equal(after.status, 'pending_approval');
    assert.notDeepEqual(after.lines, pending.lines);
    assert.deepEqual(
      after.approvals.map((a: Json) => a.decision),
      ['voided', 'pending'],
    );
  });

  test('approve racing an edit (another instance) never leaves approved lines other than those submitted', async () => {
    const t = await tenant(ctx, [{ name: 'Deep', when: { lineDiscountPercentAbove: 10 } }]);
    for (let round = 0; round < 12; round++) {
      const pending = await submitted(t);
      const [decision, edit] = await Promise.all([
        t.act(t.dana, pending.id, 'approve'),
        other.call('PUT', `/v1/quotes/${pending.id}`, {
          key: t.rep,
          body: t.body({ productId: 'BASE-S', quantity: 3 + (round % 5), discountPercent: 40 }),
        }),
      ]);
      assert.ok([200, 409].includes(decision.status), decision.text);
      assert.ok([200, 409].includes(edit.status), edit.text);
      const final = (await t.as(t.rep).call('GET', `/v1/quotes/${pending.id}`)).body;
      if (final.status === 'approved') {
        assert.deepEqual(final.lines, pending.lines, `round ${round}: approved lines are those submitted`);
        assert.equal(final.approvals.at(-1).decision, 'approved');
      } else {
        assert.equal(final.status, 'draft', `round ${round}`);
        assert.equal(edit.status, 200, 'only the edit returns it to draft');
        assert.notDeepEqual(final.lines, pending.lines);
        assert.ok(final.approvals.every((e: Json) => e.decision !== 'pending' && e.decision !== 'approved'));
      }
      if (final.status === 'draft') ok(await t.act(t.rep, pending.id, 'cancel'), 200);
    }
  });
});
