import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { assertProblem, describeEachDatabase, otherInstance } from '../helpers/app.ts';
import { apply, exportText } from './round-trip.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// A fresh copy each time, typed loosely (JSON), so that a test may change any part of it.
const laptop = (overrides: Record<string, unknown> = {}) =>
  JSON.parse(
    JSON.stringify({
      header: { productId: 'LAPTOP', properties: { color: 'grey' } },
      options: [
        {
          name: 'Memory',
          type: 'INCLUDED',
          configuration: { minCount: 1, maxCount: 1, defaultProductId: 'RAM-16' },
          products: [
            { productId: 'RAM-16', entry: { prices: { USD: { listPrice: 80 }, EUR: { listPrice: 75 } } } },
            { productId: 'RAM-32', entry: { prices: { USD: { listPrice: 160 } } } },
          ],
        },
        {
          name: 'Warranty',
          products: [{ productId: 'WARRANTY-3Y', entry: { prices: { USD: { standardPrice: 99 } } } }],
        },
      ],
      rules: [
        {
          name: 'Big memory needs the warranty',
          kind: 'requires',
          when: { option: 'Memory', productId: 'RAM-32' },
          then: [{ option: 'Warranty' }],
        },
      ],
      ...overrides,
    }),
  );
const file = (...bundles: unknown[]) => ({ formatVersion: 1, bundles });

describeEachDatabase('catalogue files', (ctx) => {
  const empty = { create: 0, change: 0, delete: 0 };

  test('a file that breaks the schema: 400 with every problem and its pointer; nothing written', async () => {
    const key = await ctx.newKey('schema-bad');
    const result = await ctx.call('POST', '/v1/catalogue/apply', {
      key,
      body: {
        formatVersion: 1,
        bundles: [
          { header: { productId: '' }, options: [{ name: 'Memory', type: 'SOMETIMES' }] },
          {
            header: { productId: 'X' },
            colour: 'red',
            options: [{ name: 'A', products: [{ productId: 'P', entry: { prices: { XXX: {} } } }] }],
          },
        ],
      },
    });
    assertProblem(result, 400, 'validation_failed');
    const pointers = result.body.errors.map((e: { pointer: string }) => e.pointer);
    for (const expected of [
      '/bundles/0/header/productId',
      '/bundles/0/options/0/type',
      '/bundles/1/colour',
    ]) {
      assert.ok(pointers.includes(expected), `${expected} in ${pointers}`);
    }
    assert.ok(
      pointers.some((p: string) => p.startsWith('/bundles/1/options/0/products/0/entry/prices')),
      String(pointers),
    );
    assert.match(await exportText(ctx.call, key), /"bundles": \[\]/);
  });

  test('a file that breaks rules across records: 422 with every problem; nothing written', async () => {
    const key = await ctx.newKey('rules-bad');
    const bad = file(
      laptop({
        options: [
          {
            name: 'Memory',
            configuration: { minCount: 3, maxCount: 1, defaultProductId: 'RAM-64' },
            products: [{ productId: 'RAM-16' }, { productId: 'RAM-16' }],
          },
          { name: 'Memory' },
          {
            name: 'Dock',
            priceBook: null,
            products: [{ productId: 'DOCK', entry: { prices: { USD: { listPrice: 1 } } } }],
          },
        ],
        rules: [
          {
            name: 'r',
            kind: 'requires',
            when: { option: 'Graphics' },
            then: [{ option: 'Memory', productId: 'RAM-8' }],
          },
        ],
      }),
      laptop(),
    );
    const result = await ctx.call('POST', '/v1/catalogue/apply', { key, body: bad });
    assertProblem(result, 422, 'rule_violation');
    const found = result.body.errors
      .map((e: { code: string; pointer: string }) => `${e.code} ${e.pointer}`)
      .sort();
    assert.deepEqual(found, [
      'default_product_not_in_option /bundles/0/options/0/configuration/defaultProductId',
      'duplicate_key /bundles/1/header/productId',
      'duplicate_option /bundles/0/options/1/name',
      'duplicate_product /bundles/0/options/0/products/1/productId',
      'entry_without_price_book /bundles/0/options/2/products/0/entry',
      'min_greater_than_max /bundles/0/options/0/configuration/minCount',
      'unknown_reference /bundles/0/rules/0/then/0/productId',
      'unknown_reference /bundles/0/rules/0/when/option',
    ]);
    const tooPrecise = file(
      laptop({
        options: [
          { name: 'A', products: [{ productId: 'P', entry: { prices: { USD: { listPrice: 1.0000001 } } } }] },
        ],
        rules: [],
      }),
    );
    const precise = await ctx.call('POST', '/v1/catalogue/apply', { key, body: tooPrecise });
    assertProblem(precise, 400, 'validation_failed');
    assert.equal(
      precise.body.errors[0].pointer,
      '/bundles/0/options/0/products/0/entry/prices/USD/listPrice',
    );
    assert.match(await exportText(ctx.call, key), /"bundles": \[\]/);
  });

  test('dry run answers the plan and writes nothing, events included', async () => {
    const key = await ctx.newKey('dry');
    const events = async () => (await ctx.call('GET', '/v1/events?limit=100', { key })).body.events.length;
    const plan = await apply(ctx.call, key, file(laptop()), '?dryRun=true');
    assert.deepEqual(plan, {
      dryRun: true,
      summary: { create: 1, change: 0, delete: 0 },
      changes: [{ action: 'create', kind: 'bundle', key: { bundle: 'LAPTOP' } }],
    });
    assert.match(await exportText(ctx.call, key), /"bundles": \[\]/);
    assert.equal(await events(), 0);
    const applied = await apply(ctx.call, key, file(laptop()));
    assert.equal(applied.dryRun, false);
    assert.deepEqual(applied.summary, plan.summary);
  });

  test('a change is planned per record with the fields before and after, and applied with its events', async () => {
    const key = await ctx.newKey('changes');
    await apply(ctx.call, key, file(laptop()));
    const eventsBefore = (await ctx.call('GET', '/v1/events?limit=100', { key })).body.events;
    assert.deepEqual(
      eventsBefore.map((e: { type: string }) => e.type),
      ['bundle.created'],
    );
    const changed = laptop();
    changed.options[0].products[1].entry = {
      prices: { USD: { listPrice: 150 }, JPY: { listPrice: 20000 } },
    };
    changed.options[1].products.push({
      productId: 'WARRANTY-5Y',
      entry: { prices: { USD: { standardPrice: 149 } } },
    });
    changed.header.properties = { color: 'black' };
    const plan = await apply(ctx.call, key, file(changed));
    assert.deepEqual(plan.summary, { create: 1, change: 2, delete: 0 });
    assert.deepEqual(plan.changes, [
      {
        action: 'change',
        kind: 'bundle',
        key: { bundle: 'LAPTOP' },
        before: { '/header/properties/color': 'grey' },
        after: { '/header/properties/color': 'black' },
      },
      {
        action: 'change',
        kind: 'product',
        key: { bundle: 'LAPTOP', option: 'Memory', productId: 'RAM-32' },
        before: { '/entry/prices/USD/listPrice': 160, '/entry/prices/JPY': null },
        after: {
          '/entry/prices/USD/listPrice': 150,
          '/entry/prices/JPY': { standardPrice: null, listPrice: 20000, adjustment: null },
        },
      },
      {
        action: 'create',
        kind: 'product',
        key: { bundle: 'LAPTOP', option: 'Warranty', productId: 'WARRANTY-5Y' },
      },
    ]);
    const events = (await ctx.call('GET', '/v1/events?limit=100', { key })).body.events;
    assert.deepEqual(
      events.map((e: { type: string }) => e.type),
      ['bundle.created', 'bundle.updated'],
    );
    assert.deepEqual(events[1].data.object.header.properties, { color: 'black' });
    assert.deepEqual((await apply(ctx.call, key, file(changed))).summary, empty);
    const exported = JSON.parse(await exportText(ctx.call, key));
    assert.equal(exported.bundles[0].options[0].products[1].entry.prices.JPY.listPrice, 20000);
  });

  test('prune deletes what the file leaves out, and only with the flag', async () => {
    const key = await ctx.newKey('prune');
    await apply(ctx.call, key, file(laptop(), laptop({ header: { productId: 'DESKTOP' } })));
    const smaller = laptop({ rules: [] });
    smaller.options = [{ ...smaller.options[0], products: [smaller.options[0].products[0]] }];
    const kept = await apply(ctx.call, key, file(smaller));
    assert.deepEqual(kept.summary, empty, 'without prune nothing is deleted');
    assert.equal(JSON.parse(await exportText(ctx.call, key)).bundles.length, 2);
    const plan = await apply(ctx.call, key, file(smaller), '?prune=true&dryRun=true');
    assert.deepEqual(
      plan.changes.map((c: { action: string; kind: string; key: object }) => [
        c.action,
        c.kind,
        Object.values(c.key).join('/'),
      ]),
      [
        ['delete', 'product', 'LAPTOP/Memory/RAM-32'],
        ['delete', 'option', 'LAPTOP/Warranty'],
        ['delete', 'rule', 'LAPTOP/Big memory needs the warranty'],
        ['delete', 'bundle', 'DESKTOP'],
      ],
    );
    assert.equal(JSON.parse(await exportText(ctx.call, key)).bundles.length, 2, 'a dry run prunes nothing');
    await apply(ctx.call, key, file(smaller), '?prune=true');
    const after = JSON.parse(await exportText(ctx.call, key));
    assert.deepEqual(
      after.bundles.map((b: { key: string }) => b.key),
      ['LAPTOP'],
    );
    assert.deepEqual(
      after.bundles[0].options.map((o: { name: string }) => o.name),
      ['Memory'],
    );
    assert.deepEqual(
      after.bundles[0].options[0].products.map((p: { productId: string }) => p.productId),
      ['RAM-16'],
    );
    assert.deepEqual(after.bundles[0].rules, []);
  });

  test('a bundle made through the API is found by its header productId; a clone by "<productId> (2)"', async () => {
    const key = await ctx.newKey('api-made');
    const made = await ctx.call('POST', '/v1/bundles', {
      key,
      body: { header: { productId: 'LAPTOP', properties: {} } },
    });
    assert.equal(made.status, 201);
    const clone = await ctx.call('POST', `/v1/bundles/${made.body.id}/clone`, { key, body: {} });
    assert.equal(clone.status, 201);
    const exported = JSON.parse(await exportText(ctx.call, key));
    assert.deepEqual(
      exported.bundles.map((b: { key: string }) => b.key),
      ['LAPTOP', 'LAPTOP (2)'],
    );
    const plan = await apply(ctx.call, key, file(laptop()));
    assert.equal(plan.summary.create, 3, 'the two options and the rule');
    assert.ok(plan.changes.every((c: { key: { bundle: string } }) => c.key.bundle === 'LAPTOP'));
    // Its header moves, yet the file still finds it by its key.
    const moved = laptop({ key: 'LAPTOP', header: { productId: 'LAPTOP-V2' } });
    assert.equal((await apply(ctx.call, key, file(moved))).summary.change, 1);
    assert.deepEqual((await apply(ctx.call, key, file(moved))).summary, empty);
  });

  test('tenancy: an account exports and applies only its own catalogue', async () => {
    const [a, b] = [await ctx.newKey('tenant-a'), await ctx.newKey('tenant-b')];
    await apply(ctx.call, a, file(laptop()));
    assert.match(await exportText(ctx.call, b), /"bundles": \[\]/);
    const plan = await apply(ctx.call, b, file(laptop()), '?prune=true');
    assert.equal(plan.summary.create, 1, 'the same key in another account is another bundle');
    await apply(ctx.call, b, file(), '?prune=true');
    assert.equal(JSON.parse(await exportText(ctx.call, a)).bundles.length, 1, "b's prune leaves a alone");
  });

  test('read-only keys may export but not apply, dry run included; no key is 401', async () => {
    const key = await ctx.newKey('readers', { readOnly: true });
    assert.equal((await ctx.call('GET', '/v1/catalogue', { key })).status, 200);
    assertProblem(await ctx.call('POST', '/v1/catalogue/apply', { key, body: file() }), 403, 'forbidden');
    assertProblem(
      await ctx.call('POST', '/v1/catalogue/apply?dryRun=true', { key, body: file() }),
      403,
      'forbidden',
    );
    assertProblem(await ctx.call('GET', '/v1/catalogue', { key: null }), 401, 'unauthorized');
  });

  test('the JSON Schema is published without a key, and every export is valid by it', async () => {
    const key = await ctx.newKey('schema');
    await apply(ctx.call, key, file(laptop()));
    const schema = await ctx.call('GET', '/catalogue.schema.json', { key: null });
    assert.equal(schema.status, 200);
    const validate = addFormats(new Ajv({ strict: false, allErrors: true })).compile(schema.body);
    const exported = JSON.parse(await exportText(ctx.call, key));
    assert.ok(validate(exported), JSON.stringify(validate.errors));
    assert.ok(!validate({ formatVersion: 1, bundles: [{}] }));
  });

  test('a file over CATALOGUE_BODY_LIMIT answers 413; the limit is its own, above BODY_LIMIT', async () => {
    const small = await otherInstance(ctx, { catalogueBodyLimit: 4096, bodyLimit: 1024 });
    try {
      const key = await ctx.newKey('limits');
      const big = file(...Array.from({ length: 200 }, (_, i) => ({ header: { productId: `P-${i}` } })));
      assertProblem(
        await small.call('POST', '/v1/catalogue/apply', { key, body: big }),
        413,
        'payload_too_large',
      );
      const fits = file(...Array.from({ length: 40 }, (_, i) => ({ header: { productId: `P-${i}` } })));
      assert.ok(JSON.stringify(fits).length > 1024);
      assert.equal((await small.call('POST', '/v1/catalogue/apply', { key, body: fits })).status, 200);
    } finally {
      await small.close();
    }
  });
});
