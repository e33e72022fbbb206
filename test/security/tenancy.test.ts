import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { type OpenApiDocument, type Operation, operationsOf, resolverOf } from '../fuzz/openapi.ts';
import { minimalOf } from '../fuzz/schema-arbitrary.ts';
import { assertProblem, type CallResult, describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are built and read generically
type Json = any;

/** Every row of an account in every table that has accounts, every column, in a stable order. */
async function snapshot(db: Db, accountId: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of await db.introspection.getTables()) {
    if (!table.columns.some((c) => c.name === 'account_id')) continue;
    const { rows } = await sql
      .raw<Record<string, unknown>>(`select * from "${table.name}" where account_id = '${accountId}'`)
      .execute(db);
    out[table.name] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return out;
}

/** The ids of one account's data set, under the names path parameters and body fields give them. */
interface Ids {
  bundleId: string;
  optionId: string;
  productId: string;
  optionProductId: string;
  priceBookId: string;
  ruleId: string;
  eventId: string;
  endpointId: string;
  quoteId: string;
  policyId: string;
}

/** A full data set: a bundle, options, products, prices with adjustments, a variant table, a default product. */
async function dataSet(ctx: TestContext, key: string, tag: string): Promise<Ids> {
  const { bundle, options } = await createBundle(ctx, {
    key,
    header: { productId: `${tag}-HEADER`, properties: { secret: `${tag}-SECRET-PROPERTY` } },
    options: [
      {
        name: `${tag}-SECRET-OPTION`,
        type: 'INCLUDED',
        products: [{ productId: `${tag}-P1`, properties: { size: 'M' } }, { productId: `${tag}-P2` }],
      },
    ],
  });
  const option = options[0];
  const [first] = option.products;
  const expectOk = (result: CallResult, what: string) =>
    assert.ok(result.status < 300, `${what}: ${result.text}`);
  expectOk(
    await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      key,
      body: [
        { productId: first.productId, currency: 'USD', standardPrice: 10, listPrice: 12 },
        {
          productId: first.productId,
          currency: 'EUR',
          standardPrice: 9,
          adjustment: { type: 'variant', values: [{ value: 'M', unitPrice: 8 }] },
        },
        {
          productId: `${tag}-P2`,
          currency: 'USD',
          standardPrice: 5,
          adjustment: { type: 'percent', amount: 10 },
        },
      ],
    }),
    'prices',
  );
  expectOk(
    await ctx.call(
      'PUT',
      `/v1/pricebooks/${option.priceBookId}/products/${first.productId}/product-variants`,
      {
        key,
        body: { isDynamic: true, template: '{size}', properties: [{ name: 'size', values: ['M'] }] },
      },
    ),
    'variants',
  );
  expectOk(
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${option.id}`, {
      key,
      body: { configuration: { defaultOptionProductId: first.id, minCount: 1, maxCount: 1 } },
    }),
    'default product',
  );
  const rule = await ctx.call('POST', `/v1/bundles/${bundle.id}/rules`, {
    key,
    body: {
      name: `${tag}-RULE`,
      kind: 'requires',
      when: { optionId: option.id, productId: first.productId },
      then: [{ optionId: option.id }],
    },
  });
  expectOk(rule, 'rule');
  const endpoint = await ctx.call('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `https://hooks.example.com/${tag}`, eventTypes: ['*'], description: `${tag}-SECRET-HOOK` },
  });
  expectOk(endpoint, 'webhook endpoint');
  const quote = await ctx.call('POST', '/v1/quotes', {
    key,
    body: {
      currency: 'USD',
      bundles: [
        {
          bundleId: bundle.id,
          options: [{ optionId: option.id, products: [{ productId: `${tag}-P2`, quantity: 1 }] }],
        },
      ],
    },
  });
  expectOk(quote, 'quote');
  const policy = await ctx.call('POST', '/v1/approval-policies', {
    key,
    body: { name: `${tag}-SECRET-POLICY`, when: { unitPriceEdited: true } },
  });
  expectOk(policy, 'approval policy');
  const events = await ctx.call('GET', '/v1/events', { key, query: { limit: '1' } });
  return {
    bundleId: bundle.id,
    optionId: option.id,
    productId: first.productId,
    optionProductId: first.id,
    priceBookId: option.priceBookId,
    ruleId: rule.body.id,
    eventId: events.body.events[0].id,
    endpointId: endpoint.body.id,
    quoteId: quote.body.id,
    policyId: policy.body.id,
  };
}

/** Body fields that name a record of the account (a CRM productId is not one: any account may use any). */
const referenceFields: Record<string, keyof Ids> = {
  bundleId: 'bundleId',
  optionId: 'optionId',
  bundleOptionId: 'optionId',
  defaultOptionProductId: 'optionProductId',
};

/** Puts `ids` into every reference field of a body, and `productIds` into its productId fields. */
function withIds(node: Json, ids: Ids, productId: string, root = true): Json {
  if (Array.isArray(node)) {
    // A body that is a list of strings is a list of product ids (DELETE .../prices).
    return node.map((item) =>
      root && typeof item === 'string' ? productId : withIds(item, ids, productId, false),
    );
  }
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      const field = referenceFields[key];
      if (field && typeof value === 'string') return [key, ids[field]];
      if (key === 'productId' && typeof value === 'string') return [key, productId];
      return [key, withIds(value, ids, productId, false)];
    }),
  );
}

describeEachDatabase('another account’s ids, on every route of /openapi.json', (ctx) => {
  let operations: Operation[] = [];
  let resolve: (ref: string) => unknown;
  let owner: Ids;
  let intruderKey = '';

  before(async () => {
    await ctx.app.ready();
    const document = ctx.app.swagger() as unknown as OpenApiDocument;
    operations = operationsOf(document);
    resolve = resolverOf(document);
    intruderKey = await ctx.newKey('intruder');
    owner = await dataSet(ctx, ctx.key, 'OWNER');
  });

  /** The request an operation needs to reach its handler, ids taken from `path` for the path, `body` for the rest. */
  function requestOf(operation: Operation, path: Ids, body: Ids) {
    const url = operation.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const id = path[name as keyof Ids];
      assert.ok(id, `${operation.name}: a new path parameter {${name}}; say which record id it takes`);
      return encodeURIComponent(id);
    });
    const query: Record<string, string> = {};
    for (const parameter of operation.queryParams.filter((p) => p.required)) {
      query[parameter.name] =
        parameter.name === 'bundleIds' ? body.bundleId : String(minimalOf(parameter.schema, resolve));
    }
    const wanted = new Set(Object.keys(referenceFields));
    const payload = operation.body
      ? withIds(minimalOf(operation.body.schema, resolve, wanted), body, body.productId)
      : undefined;
    return { url, query, payload };
  }

  const leaks = (result: CallResult) =>
    [
      'OWNER-SECRET-PROPERTY',
      'OWNER-SECRET-OPTION',
      'OWNER-HEADER',
      'OWNER-SECRET-HOOK',
      'OWNER-SECRET-POLICY',
    ].filter((s) => result.text.includes(s));

  test('path ids of another account: 404 on every operation, and nothing of that account changes', async () => {
    const before = await snapshot(ctx.db, 'acme');
    const failures: string[] = [];
    let walked = 0;
    for (const operation of operations.filter((o) => o.pathParams.length > 0)) {
      const { url, query, payload } = requestOf(operation, owner, owner);
      const result = await ctx.call(operation.method, url, { key: intruderKey, query, body: payload });
      walked++;
      try {
        assertProblem(result, 404, 'not_found');
        assert.deepEqual(leaks(result), []);
      } catch (error) {
        failures.push(`${operation.method} ${url}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(walked >= 20, `only ${walked} operations have path ids`);
    assert.deepEqual(await snapshot(ctx.db, 'acme'), before);
  });

  test('ids of another account in the body or query: 422 unknown_reference (or left out), never served', async () => {
    const before = await snapshot(ctx.db, 'acme');
    const failures: string[] = [];
    let carried = 0;
    for (const operation of operations) {
      // The intruder's own records in the path, the owner's in the body: only the body can be the reason. A fresh
      // set for each, since some operations delete what they are given.
      const intruder = await dataSet(ctx, intruderKey, 'INTRUDER');
      const { url, query, payload } = requestOf(operation, intruder, owner);
      const named = JSON.stringify([query, payload ?? null]);
      const carriesOwnerIds = [owner.bundleId, owner.optionId, owner.optionProductId].some((id) =>
        named.includes(id),
      );
      if (carriesOwnerIds) carried++;
      const result = await ctx.call(operation.method, url, { key: intruderKey, query, body: payload });
      try {
        assert.ok(result.status < 500, `answered ${result.status}`);
        assert.deepEqual(leaks(result), []);
        if (operation.name === 'getBundlesDetails') {
          assert.equal(result.status, 200);
          assert.deepEqual(result.body.bundles, []);
          assert.deepEqual(result.body.notFound, [owner.bundleId]);
        } else if (carriesOwnerIds) {
          assertProblem(result, 422);
          assert.ok(['unknown_reference', 'quote_invalid', 'rule_violation'].includes(result.body.code));
          if (result.body.code === 'quote_invalid') {
            for (const item of result.body.errors) assert.match(item.code, /^unknown_/);
          }
        } else {
          // Nothing of the owner was named: whatever the answer, it is about the intruder's own records.
          assert.ok(!result.text.includes(owner.bundleId) && !result.text.includes(owner.optionId));
        }
      } catch (error) {
        failures.push(
          `${operation.method} ${url} ${named.slice(0, 200)}: ${(error as Error).message.split('\n')[0]}`,
        );
      }
    }
    assert.deepEqual(failures, []);
    // Options and bundles with a default product, a price book's option, a quote's bundles and options.
    assert.ok(carried >= 5, `only ${carried} operations take record ids in the body`);
    assert.deepEqual(await snapshot(ctx.db, 'acme'), before);
  });

  test('the owner still reads everything it had', async () => {
    const details = await ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: owner.bundleId } });
    assert.equal(details.status, 200);
    assert.equal(details.body.bundles[0].included[0].products.length, 2);
    assert.ok(details.text.includes('OWNER-SECRET-PROPERTY'));
  });
});
