import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { invariantViolations } from '../fuzz/invariants.ts';
import { type CallResult, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read freely
type Json = any;

const productsPerOption = 30;
const cloners = 4;

const products = (prefix: string) =>
  Array.from({ length: productsPerOption }, (_, i) => ({ productId: `${prefix}-${i}`, properties: {} }));

// Clones of one bundle while, through a second instance, products are added and priced, every price of one book is
// rewritten in one request, and at last the bundle is deleted. A copy must be of one committed state of the source
// (every option with its book, every price there, one book's prices all from the same rewrite), or the clone 404s.
describeEachDatabase('bundle clone racing writes and a delete', (ctx) => {
  let writer: Awaited<ReturnType<typeof otherInstance>>;

  before(async () => {
    writer = await otherInstance(ctx);
  });

  after(async () => {
    await writer?.close();
  });

  test('answers 201 with a complete copy or 404, never 500', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: [
        { name: 'A', type: 'INCLUDED', products: products('A') },
        { name: 'B', type: 'ADD_ON', products: products('B') },
      ],
    });
    const [a, b] = options;
    const price = (productId: string, standardPrice: number) => ({
      productId,
      currency: 'USD',
      standardPrice,
    });
    for (const [option, prefix] of [
      [a, 'A'],
      [b, 'B'],
    ] as const) {
      const result = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
        body: products(prefix).map((p) => price(p.productId, 1)),
      });
      assert.equal(result.status, 200, result.text);
    }

    const answers: CallResult[] = [];
    const cloneAnswers: CallResult[] = [];
    const copies: string[] = [];
    let deleted = false;
    const check = (result: CallResult) => {
      answers.push(result);
      return result.status;
    };
    const cloner = async () => {
      for (;;) {
        const result = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { body: {} });
        cloneAnswers.push(result);
        if (check(result) !== 201) return;
        copies.push(result.body.id);
      }
    };
    const adder = async () => {
      for (let i = 0; !deleted; i++) {
        const productId = `NEW-${i}`;
        check(
          await writer.call('POST', `/v1/bundles/${bundle.id}/options/${a.id}/products`, {
            body: [{ productId }],
          }),
        );
        check(
          await writer.call('PUT', `/v1/pricebooks/${a.priceBookId}/prices`, { body: [price(productId, 2)] }),
        );
      }
    };
    const repricer = async () => {
      for (let n = 2; !deleted; n++) {
        const body = products('B').map((p) => price(p.productId, n));
        check(await writer.call('PUT', `/v1/pricebooks/${b.priceBookId}/prices`, { body }));
      }
    };
    const remover = async () => {
      while (copies.length < 3 * cloners) await new Promise((resolve) => setTimeout(resolve, 5));
      const result = await writer.call('DELETE', `/v1/bundles/${bundle.id}`);
      deleted = true;
      assert.equal(result.status, 204, result.text);
    };
    await Promise.all([...Array.from({ length: cloners }, cloner), adder(), repricer(), remover()]);

    const errors = answers.filter((r) => r.status >= 500);
    assert.deepEqual(
      errors.slice(0, 3).map((r) => r.text),
      [],
      `${errors.length} of ${answers.length} answered 5xx`,
    );
    const clones = answers.filter((r) => r.body?.clonedBundleTempName !== undefined || r.status === 404);
    assert.ok(copies.length >= 3 * cloners);
    assert.ok(
      clones.some((r) => r.status === 404),
      'clones after the delete answer 404',
    );

    for (const id of copies) {
      const details = await ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: id } });
      assert.equal(details.status, 200, details.text);
      const [copy] = details.body.bundles;
      assert.deepEqual([copy.included.length, copy.addOns.length], [1, 1], `copy ${id} has both options`);
      const priceOf = (p: Json) => p.standardPrice.USD;
      const copiedA: Json[] = copy.included[0].products;
      const copiedB: Json[] = copy.addOns[0].products;
      for (const p of copiedA) {
        // A product added later may have been copied before its price was written, never with another price.
        const expected = p.productId.startsWith('A-') ? [1] : [undefined, 2];
        assert.ok(expected.includes(priceOf(p)), `${id}: ${p.productId} at ${priceOf(p)}`);
      }
      assert.equal(copiedA.filter((p: Json) => p.productId.startsWith('A-')).length, productsPerOption);
      assert.equal(copiedB.length, productsPerOption, `${id}: every product of B`);
      assert.equal(new Set(copiedB.map(priceOf)).size, 1, `${id}: B's prices from one rewrite`);
      assert.notEqual(priceOf(copiedB[0]), undefined, `${id}: B priced`);
    }
    assert.deepEqual(await invariantViolations(ctx.db), []);
  });
});
