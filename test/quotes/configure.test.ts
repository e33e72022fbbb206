import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase, otherInstance, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

/**
 * The default bundle (Base, INCLUDED, one of BASE-S (default) or BASE-L; Extras, ADD_ON, EXTRA-WARRANTY and
 * EXTRA-SETUP), priced in USD, with two rules: the large base requires the warranty, the small one excludes setup.
 */
async function setUp(ctx: TestContext) {
  const { bundle, options } = await createBundle(ctx);
  const [base, extras] = options;
  const small = base.products.find((p: Json) => p.productId === 'BASE-S');
  const put = await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}`, {
    body: { configuration: { defaultOptionProductId: small.id } },
  });
  assert.equal(put.status, 200, put.text);
  for (const option of [base, extras]) {
    const prices = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: option.products.map((p: Json, i: number) => ({
        productId: p.productId,
        currency: 'USD',
        standardPrice: 10 * (i + 1),
      })),
    });
    assert.equal(prices.status, 200, prices.text);
  }
  const rule = async (body: Json) => {
    const made = await ctx.call('POST', `/v1/bundles/${bundle.id}/rules`, { body });
    assert.equal(made.status, 201, made.text);
    return made.body.id as string;
  };
  const warranty = await rule({
    name: 'Large needs warranty',
    kind: 'requires',
    when: { optionId: base.id, productId: 'BASE-L' },
    then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
    message: 'The large base ships with the warranty',
  });
  const setup = await rule({
    name: 'No setup on the small base',
    kind: 'excludes',
    when: { optionId: base.id, productId: 'BASE-S' },
    then: [{ optionId: extras.id, productId: 'EXTRA-SETUP' }],
  });
  const configure = (body: Json, key = ctx.key) =>
    ctx.call('POST', `/v1/bundles/${bundle.id}/configure`, { body, key });
  return { bundle, base, extras, rules: { warranty, setup }, configure };
}

/** productId -> [state, reason rule ids] of an answer. */
function states(answer: Json): Record<string, [string, string[]]> {
  return Object.fromEntries(
    answer.options.flatMap((o: Json) =>
      o.products.map((p: Json) => [p.productId, [p.state, p.reasons.map((r: Json) => r.ruleId)]]),
    ),
  );
}

describeEachDatabase('configure', (ctx) => {
  test('states with reasons, valid, complete, the cheapest completion and its quote', async () => {
    const { base, extras, rules, configure } = await setUp(ctx);
    const large = await configure({
      currency: 'USD',
      selections: [{ optionId: base.id, productId: 'BASE-L', quantity: 2 }],
    });
    assert.equal(large.status, 200, large.text);
    // Sent as serialized by the service (the options made once per outcome): JSON, in the schema's order.
    assert.equal(large.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(Object.keys(large.body), [
      'valid',
      'complete',
      'options',
      'violations',
      'repairs',
      'completion',
      'quote',
      'quoteProblems',
    ]);
    assert.deepEqual(states(large.body), {
      'BASE-S': ['excluded', ['option']],
      'BASE-L': ['selected', []],
      'EXTRA-WARRANTY': ['required', [rules.warranty]],
      'EXTRA-SETUP': ['available', []],
    });
    assert.equal(large.body.valid, true);
    assert.equal(large.body.complete, false);
    assert.deepEqual(large.body.violations, []);
    const reason = large.body.options[1].products[0].reasons[0];
    assert.deepEqual(reason, {
      ruleId: rules.warranty,
      optionId: null,
      message:
        'The large base ships with the warranty: product BASE-L in "Base" requires product EXTRA-WARRANTY in "Extras"',
    });
    // With a currency, each choice carries the unit price a quote gives it: at its quantity in the request, else its
    // least.
    assert.deepEqual(
      large.body.options.map((o: Json) => o.products.map((p: Json) => [p.productId, p.unitPrice])),
      [
        [
          ['BASE-S', 10],
          ['BASE-L', 20],
        ],
        [
          ['EXTRA-WARRANTY', 10],
          ['EXTRA-SETUP', 20],
        ],
      ],
    );
    assert.deepEqual(large.body.repairs, []);
    assert.deepEqual(large.body.options[0].products[0].reasons[0].optionId, base.id);
    assert.deepEqual(large.body.completion, {
      selections: [
        { optionId: base.id, productId: 'BASE-L', quantity: 2 },
        { optionId: extras.id, productId: 'EXTRA-WARRANTY', quantity: 1 },
      ],
    });
    assert.equal(large.body.quote.total, 50);
    assert.deepEqual(large.body.quoteProblems, []);

    const empty = await configure({ selections: [] });
    assert.deepEqual(states(empty.body), {
      'BASE-S': ['available', []],
      'BASE-L': ['available', []],
      'EXTRA-WARRANTY': ['available', []],
      'EXTRA-SETUP': ['available', []],
    });
    assert.equal(empty.body.complete, false, 'the INCLUDED option has no product yet');
    assert.deepEqual(empty.body.completion.selections, [
      { optionId: base.id, productId: 'BASE-S', quantity: 1 },
    ]);
    assert.equal(empty.body.quote, null, 'no currency, no quote');
    assert.equal(empty.body.options[0].products[0].unitPrice, undefined, 'no currency, no unit prices');

    const rejected = await configure({
      selections: [],
      rejections: [{ optionId: base.id, productId: 'BASE-S' }],
    });
    assert.deepEqual(states(rejected.body), {
      'BASE-S': ['excluded', []],
      'BASE-L': ['required', ['option']],
      'EXTRA-WARRANTY': ['required', ['option', rules.warranty]],
      'EXTRA-SETUP': ['available', []],
    });

    const done = await configure({
      currency: 'USD',
      selections: [
        { optionId: base.id, productId: 'BASE-S' },
        { optionId: extras.id, productId: 'EXTRA-WARRANTY' },
      ],
    });
    assert.equal(done.body.complete, true);
    assert.equal(done.body.quote.total, 20);
  });

  test('a dead end: not valid, every other product excluded, violations name the rules and counts involved', async () => {
    const { base, extras, rules, configure } = await setUp(ctx);
    const answer = await configure({
      currency: 'USD',
      selections: [
        { optionId: base.id, productId: 'BASE-S' },
        { optionId: extras.id, productId: 'EXTRA-SETUP' },
      ],
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.valid, false);
    assert.equal(answer.body.complete, false);
    assert.equal(answer.body.completion, null);
    assert.equal(answer.body.quote, null);
    assert.deepEqual(answer.body.violations, [
      {
        code: 'rule_violated',
        ruleId: rules.setup,
        optionId: null,
        message:
          'No setup on the small base: product BASE-S in "Base" excludes product EXTRA-SETUP in "Extras"',
      },
    ]);
    assert.deepEqual(states(answer.body)['EXTRA-WARRANTY'], ['excluded', []]);
    // Either selection alone is the way out: each is a repair of one choice.
    assert.deepEqual(answer.body.repairs, [
      { remove: [{ optionId: base.id, productId: 'BASE-S' }], unreject: [] },
      { remove: [{ optionId: extras.id, productId: 'EXTRA-SETUP' }], unreject: [] },
    ]);
  });

  test('repairs undo rejections too; messages name products by their name property and product id', async () => {
    const { bundle, base, extras, rules, configure } = await setUp(ctx);
    const named = await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/BASE-L`, {
      body: { properties: { size: 'L', name: 'Large base' } },
    });
    assert.equal(named.status, 200, named.text);
    const answer = await configure({
      selections: [{ optionId: extras.id, productId: 'EXTRA-SETUP' }],
      rejections: [
        { optionId: base.id, productId: 'BASE-S' },
        { optionId: base.id, productId: 'BASE-L' },
      ],
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.valid, false);
    assert.deepEqual(answer.body.violations, [
      { code: 'option_count', ruleId: 'option', optionId: base.id, message: '"Base" must have 1 product' },
    ]);
    // Taking the setup out does not help: the base still has no product. Undoing either rejection does, except that
    // the small base excludes the setup, so that one needs the setup removed too.
    assert.deepEqual(answer.body.repairs, [
      { remove: [], unreject: [{ optionId: base.id, productId: 'BASE-L' }] },
      {
        remove: [{ optionId: extras.id, productId: 'EXTRA-SETUP' }],
        unreject: [{ optionId: base.id, productId: 'BASE-S' }],
      },
    ]);
    const large = await configure({ selections: [{ optionId: base.id, productId: 'BASE-L' }] });
    assert.equal(
      large.body.options[1].products[0].reasons[0].message,
      'The large base ships with the warranty: "Large base" (BASE-L) in "Base" requires product EXTRA-WARRANTY in ' +
        '"Extras"',
    );
    assert.equal(large.body.options[1].products[0].reasons[0].ruleId, rules.warranty);
  });

  test('names the bundle lacks are 422 with pointers; another account’s bundle is 404; read-only keys may call it', async () => {
    const { bundle, base, configure } = await setUp(ctx);
    const refused = await configure({
      selections: [
        { optionId: base.id, productId: 'NOPE' },
        { optionId: base.id, productId: 'BASE-S' },
        { optionId: base.id, productId: 'BASE-S' },
      ],
      rejections: [{ optionId: 'opt_nope', productId: 'BASE-S' }],
    });
    assertProblem(refused, 422, 'rule_violation');
    assert.deepEqual(
      refused.body.errors.map((e: Json) => [e.code, e.pointer]),
      [
        ['unknown_reference', '/selections/0/productId'],
        ['unknown_reference', '/rejections/0/optionId'],
        ['duplicate_product', '/selections/2/productId'],
      ],
    );
    const other = await setUp(ctx);
    assertProblem(
      await configure({ selections: [{ optionId: other.base.id, productId: 'BASE-S' }] }),
      422,
      'unknown_reference',
    );
    const stranger = await ctx.newKey('globex');
    assertProblem(
      await ctx.call('POST', `/v1/bundles/${bundle.id}/configure`, {
        key: stranger,
        body: { selections: [] },
      }),
      404,
    );
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await configure({ selections: [] }, readOnly)).status, 200);
    assertProblem(await configure({ selections: [], at: 'soon' }), 400, 'validation_failed');
  });

  test('a state asked again is answered alike from what was kept, with its own quantities; a rule change is seen at once, by every instance', async () => {
    const { bundle, base, rules, configure } = await setUp(ctx);
    const other = await otherInstance(ctx);
    const onOther = (body: Json) => other.call('POST', `/v1/bundles/${bundle.id}/configure`, { body });
    try {
      const large = (quantity: number) => ({
        currency: 'USD',
        selections: [{ optionId: base.id, productId: 'BASE-L', quantity }],
      });
      const first = await configure(large(2));
      assert.equal(first.status, 200, first.text);
      assert.equal(states(first.body)['EXTRA-WARRANTY']?.[0], 'required');
      const again = await configure(large(2));
      assert.deepEqual(
        { ...again.body, quote: { ...again.body.quote, at: undefined } },
        { ...first.body, quote: { ...first.body.quote, at: undefined } },
      );
      // The same state with another quantity: the states are the kept ones, the completion and quote its own.
      const more = await configure(large(3));
      assert.deepEqual(more.body.options, first.body.options);
      assert.equal(more.body.completion.selections[0].quantity, 3);
      assert.notEqual(more.body.quote.total, first.body.quote.total);
      assert.equal(states((await onOther(large(2))).body)['EXTRA-WARRANTY']?.[0], 'required');

      const removed = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/rules/${rules.warranty}`);
      assert.equal(removed.status, 204, removed.text);
      for (const ask of [configure, onOther]) {
        const after = await ask(large(2));
        assert.equal(after.status, 200, after.text);
        assert.deepEqual(states(after.body)['EXTRA-WARRANTY'], ['available', []]);
      }
    } finally {
      await other.close();
    }
  });

  test('kept outcomes are weighed into the quote catalogue cache, at most CONFIGURE_ANSWERS_KEPT of them; 0 keeps none', async () => {
    const { bundle, base } = await setUp(ctx);
    const nothing = { currency: 'USD', selections: [] };
    const chosen = (productId: string) => ({
      currency: 'USD',
      selections: [{ optionId: base.id, productId }],
    });
    /** The cache's bytes after each state is asked, on an instance keeping `kept` outcomes. */
    const bytesAfter = async (kept: number, bodies: Json[]) => {
      const instance = await otherInstance(ctx, { configureAnswersKept: kept });
      try {
        const bytes: number[] = [];
        for (const body of bodies) {
          const answer = await instance.call('POST', `/v1/bundles/${bundle.id}/configure`, { body });
          assert.equal(answer.status, 200, answer.text);
          const scraped = (await instance.call('GET', '/metrics')).text.split('\n');
          const line = scraped.find((l: string) => l.startsWith('cpq_cache_bytes{cache="quote_catalogues"}'));
          bytes.push(Number(line?.split(' ')[1]));
        }
        return bytes;
      } finally {
        await instance.close();
      }
    };
    const states = [nothing, nothing, chosen('BASE-S'), chosen('BASE-L')];
    const [none = [], one = [], two = []] = await Promise.all(
      [0, 1, 2].map((kept) => bytesAfter(kept, states)),
    );
    // Nothing kept: the catalogue alone, whatever is asked.
    const [catalogue = 0] = none;
    assert.ok(catalogue > 0);
    assert.deepEqual(none, Array(4).fill(catalogue));
    const [nothingKept = 0, again = 0, smallKept = 0, largeKept = 0] = one;
    assert.ok(nothingKept > catalogue + 100, 'an outcome is weighed into the entry');
    assert.equal(again, nothingKept, 'a state asked again is answered from what was kept, adding nothing');
    // Each outcome's own weight, from the instance keeping one: what it holds beside the catalogue.
    const weight = {
      nothing: nothingKept - catalogue,
      small: smallKept - catalogue,
      large: largeKept - catalogue,
    };
    assert.ok(weight.small > 100 && weight.large > 100);
    // Two kept: the first two states held together, then the oldest makes way for the third.
    assert.deepEqual(two, [
      catalogue + weight.nothing,
      catalogue + weight.nothing,
      catalogue + weight.nothing + weight.small,
      catalogue + weight.small + weight.large,
    ]);
  });

  test('past CONFIGURE_MAX_STEPS the search stops with 422 configuration_too_complex naming the limit', async () => {
    const { bundle } = await setUp(ctx);
    const tight = await otherInstance(ctx, { configureMaxSteps: 3 });
    try {
      // Asked again, the refusal is kept as an answer would be: the same problem, without searching again.
      for (let asked = 0; asked < 2; asked++) {
        const refused = await tight.call('POST', `/v1/bundles/${bundle.id}/configure`, {
          body: { selections: [] },
        });
        assertProblem(refused, 422, 'configuration_too_complex');
        assert.match(refused.body.detail, /more than 3 search steps \(CONFIGURE_MAX_STEPS\)/);
        assert.equal(refused.body.errors, undefined);
      }
    } finally {
      await tight.close();
    }
    // The same request within the default budget is answered.
    assert.equal(
      (await ctx.call('POST', `/v1/bundles/${bundle.id}/configure`, { body: { selections: [] } })).status,
      200,
    );
  });
});
