import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle, footprintOf, insertPriceRows, readOption, rowsLeft } from '../helpers/factories.ts';

const optionId = /^opt_[0-9A-HJKMNP-TV-Z]{26}$/;
const optionProductId = /^opp_[0-9A-HJKMNP-TV-Z]{26}$/;
const priceBookId = /^pb_[0-9A-HJKMNP-TV-Z]{26}$/;
const missingOption = 'opt_01M7Z4FGHN62EHBXHK2BWGA38Q';

function problemPointers(body: { errors?: { pointer: string }[] }): string[] {
  return [...new Set((body.errors ?? []).map((e) => e.pointer))].sort();
}

async function tableCount(
  ctx: TestContext,
  table: 'bundle_options' | 'option_products' | 'price_books' | 'price_book_products',
): Promise<number> {
  const row = await ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function snapshot(ctx: TestContext): Promise<number[]> {
  return Promise.all(
    (['bundle_options', 'option_products', 'price_books', 'price_book_products'] as const).map((t) =>
      tableCount(ctx, t),
    ),
  );
}

describeEachDatabase('options', (ctx) => {
  test('POST .../options creates an ADD_ON option after the last, with products and a price book', async () => {
    const { bundle } = await createBundle(ctx);
    const created = await ctx.call('POST', `/v1/bundles/${bundle.id}/options`, {
      body: {
        name: 'Cables',
        products: [{ productId: 'USB-C', properties: { length: '1m' } }, { productId: 'HDMI' }],
      },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.id, optionId);
    assert.match(created.body.priceBookId, priceBookId);
    assert.equal(created.headers.location, `/v1/bundles/${bundle.id}/options/${created.body.id}`);
    assert.deepEqual(created.body, {
      id: created.body.id,
      accountId: 'acme',
      bundleId: bundle.id,
      type: 'ADD_ON',
      name: 'Cables',
      priceBookId: created.body.priceBookId,
      displayOrder: 2,
      configuration: { minCount: null, maxCount: null, defaultOptionProductId: null },
      description: null,
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
    });
    const book = await ctx.db
      .selectFrom('price_books')
      .selectAll()
      .where('id', '=', created.body.priceBookId)
      .executeTakeFirstOrThrow();
    assert.equal(book.bundle_option_id, created.body.id);
    assert.equal(book.name, 'Cables');
    const read = await readOption(ctx, bundle.id, created.body.id);
    assert.deepEqual(
      read.products.map((p: { productId: string; displayOrder: number }) => [p.productId, p.displayOrder]),
      [
        ['USB-C', 0],
        ['HDMI', 1],
      ],
    );
  });

  test('POST .../options takes every field', async () => {
    const { bundle } = await createBundle(ctx, { options: [] });
    const created = await ctx.call('POST', `/v1/bundles/${bundle.id}/options`, {
      body: {
        name: 'Support',
        description: 'Pick a plan',
        type: 'INCLUDED',
        displayOrder: 7,
        configuration: { minCount: 0, maxCount: 3, defaultOptionProductId: null },
      },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, {
      id: created.body.id,
      accountId: 'acme',
      bundleId: bundle.id,
      type: 'INCLUDED',
      name: 'Support',
      priceBookId: created.body.priceBookId,
      displayOrder: 7,
      configuration: { minCount: 0, maxCount: 3, defaultOptionProductId: null },
      description: 'Pick a plan',
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
    });
    const next = await ctx.call('POST', `/v1/bundles/${bundle.id}/options`, { body: { name: 'After' } });
    assert.equal(next.body.displayOrder, 8);
  });

  test('POST .../options: 400, 404, 409 and 422 write nothing', async () => {
    const { bundle } = await createBundle(ctx);
    const before = await snapshot(ctx);
    const url = `/v1/bundles/${bundle.id}/options`;
    for (const [body, pointers] of [
      [{}, ['/name']],
      [{ name: '' }, ['/name']],
      [{ name: 'x'.repeat(201) }, ['/name']],
      [{ name: 'x', type: 'REQUIRED' }, ['/type']],
      [{ name: 'x', configuration: { minCount: -1 } }, ['/configuration/minCount']],
      [
        { name: 'x', configuration: { defaultOptionProductId: 'BASE-S' } },
        ['/configuration/defaultOptionProductId'],
      ],
      [{ name: 'x', products: [{ properties: {} }] }, ['/products/0/productId']],
      [{ name: 'x', colour: 'red' }, ['/colour']],
    ] as const) {
      const response = await ctx.call('POST', url, { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.code, 'validation_failed');
      assert.deepEqual(problemPointers(response.body), pointers);
    }

    const rules = await ctx.call('POST', url, {
      body: {
        name: 'x',
        configuration: { minCount: 2, maxCount: 1, defaultOptionProductId: 'opp_01M7Z4FGHN62EHBXHK2BWGA38R' },
        products: [{ productId: 'A', configuration: { minQuantity: 3, maxQuantity: 2 } }],
      },
    });
    assert.equal(rules.status, 422);
    assert.equal(rules.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(rules.body), [
      '/configuration/defaultOptionProductId',
      '/configuration/minCount',
      '/products/0/configuration/minQuantity',
    ]);

    const duplicate = await ctx.call('POST', url, {
      body: { name: 'x', products: [{ productId: 'A' }, { productId: 'A' }] },
    });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.code, 'conflict');
    assert.deepEqual(problemPointers(duplicate.body), ['/products/1/productId']);

    const missing = await ctx.call('POST', '/v1/bundles/bnd_01M7Z4FGHN62EHBXHK2BWGA38R/options', {
      body: { name: 'x' },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'not_found');
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('POST', url, { key: other, body: { name: 'x' } })).status, 404);
    assert.deepEqual(await snapshot(ctx), before);
  });

  test('GET .../options/{optionId} lists products by displayOrder then id; unknown ids are 404', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: [
        {
          name: 'Ordered',
          products: [
            { productId: 'C', displayOrder: 2 },
            { productId: 'A', displayOrder: 1 },
            { productId: 'B', displayOrder: 1 },
          ],
        },
      ],
    });
    const [option] = options;
    assert.deepEqual(
      option.products.map((p: { productId: string }) => p.productId),
      ['A', 'B', 'C'],
    );
    for (const product of option.products) assert.match(product.id, optionProductId);
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${missingOption}`)).status, 404);
    const otherBundle = await createBundle(ctx, { options: [] });
    assert.equal(
      (await ctx.call('GET', `/v1/bundles/${otherBundle.bundle.id}/options/${option.id}`)).status,
      404,
      'an option is found only under its own bundle',
    );
    const other = await ctx.newKey('other');
    assert.equal(
      (await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${option.id}`, { key: other })).status,
      404,
    );
  });

  test('PUT .../options/{optionId} changes the fields given and keeps the others', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    const { products, ...plain } = base;
    const url = `/v1/bundles/${bundle.id}/options/${base.id}`;

    const renamed = await ctx.call('PUT', url, { body: { name: 'Core', displayOrder: 9 } });
    assert.equal(renamed.status, 200);
    assert.ok(renamed.body.updatedAt >= plain.updatedAt);
    assert.deepEqual(renamed.body, {
      ...plain,
      name: 'Core',
      displayOrder: 9,
      updatedAt: renamed.body.updatedAt,
    });

    const configured = await ctx.call('PUT', url, {
      body: { description: null, configuration: { maxCount: 2, defaultOptionProductId: products[1].id } },
    });
    assert.equal(configured.status, 200);
    assert.deepEqual(configured.body, {
      ...plain,
      name: 'Core',
      displayOrder: 9,
      description: null,
      configuration: { minCount: 1, maxCount: 2, defaultOptionProductId: products[1].id },
      updatedAt: configured.body.updatedAt,
    });
    const retyped = await ctx.call('PUT', url, {
      body: { type: 'ADD_ON', configuration: { minCount: null } },
    });
    assert.equal(retyped.body.type, 'ADD_ON');
    assert.deepEqual(retyped.body.configuration, {
      minCount: null,
      maxCount: 2,
      defaultOptionProductId: products[1].id,
    });
    const read = await readOption(ctx, bundle.id, base.id);
    assert.deepEqual(read, { ...retyped.body, products });
  });

  test('PUT .../options/{optionId} answers 422 for broken rules and unknown references, 400, 404', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    const url = `/v1/bundles/${bundle.id}/options/${base.id}`;
    const before = await readOption(ctx, bundle.id, base.id);

    // The stored maxCount is 1: a minCount above it breaks the rule even though maxCount is not in the body.
    const aboveStored = await ctx.call('PUT', url, { body: { configuration: { minCount: 2 } } });
    assert.equal(aboveStored.status, 422);
    assert.equal(aboveStored.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(aboveStored.body), ['/configuration/minCount']);
    const belowStored = await ctx.call('PUT', url, { body: { configuration: { maxCount: 0 } } });
    assert.deepEqual(problemPointers(belowStored.body), ['/configuration/maxCount']);

    const foreignDefault = await ctx.call('PUT', url, {
      body: { name: 'changed', configuration: { defaultOptionProductId: extras.products[0].id } },
    });
    assert.equal(foreignDefault.status, 422);
    assert.equal(foreignDefault.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(foreignDefault.body), ['/configuration/defaultOptionProductId']);

    const unknownDefault = await ctx.call('PUT', url, {
      body: { configuration: { defaultOptionProductId: 'opp_01M7Z4FGHN62EHBXHK2BWGA38R' } },
    });
    assert.equal(unknownDefault.status, 422);
    assert.equal(unknownDefault.body.code, 'unknown_reference');
    assert.deepEqual(problemPointers(unknownDefault.body), ['/configuration/defaultOptionProductId']);

    // Another account's option product is unknown to this one.
    const other = await ctx.newKey('other');
    const theirs = await createBundle(ctx, { key: other });
    const theirDefault = await ctx.call('PUT', url, {
      body: { configuration: { defaultOptionProductId: theirs.options[0].products[0].id } },
    });
    assert.equal(theirDefault.body.code, 'unknown_reference');

    const both = await ctx.call('PUT', url, {
      body: {
        configuration: { minCount: 5, maxCount: 4, defaultOptionProductId: 'opp_01M7Z4FGHN62EHBXHK2BWGA38R' },
      },
    });
    assert.equal(both.status, 422);
    assert.equal(both.body.errors.length, 2);

    const bad = await ctx.call('PUT', url, {
      body: { name: '', displayOrder: -1, configuration: { maxCount: 'x' } },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(problemPointers(bad.body), ['/configuration/maxCount', '/displayOrder', '/name']);

    assert.equal(
      (await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${missingOption}`, { body: { name: 'x' } }))
        .status,
      404,
    );
    assert.equal((await ctx.call('PUT', url, { key: other, body: { name: 'theirs now' } })).status, 404);
    assert.deepEqual(await readOption(ctx, bundle.id, base.id), before);
  });

  test('DELETE .../options/{optionId} removes the option with its products, price books and entries', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    await insertPriceRows(ctx, base);
    await insertPriceRows(ctx, extras);
    const footprint = await footprintOf(ctx, 'acme', { optionId: base.id });
    assert.deepEqual(await rowsLeft(ctx, footprint), {
      bundles: 0,
      bundle_options: 1,
      option_products: 2,
      price_books: 1,
      price_book_products: 2,
      price_book_prices: 4,
      product_variants: 1,
    });
    const other = await ctx.newKey('other');
    assert.equal(
      (await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}`, { key: other })).status,
      404,
    );
    assert.equal((await rowsLeft(ctx, footprint)).bundle_options, 1);

    const deleted = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const after = await rowsLeft(ctx, footprint);
    assert.ok(
      Object.values(after).every((n) => n === 0),
      JSON.stringify(after),
    );
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${base.id}`)).status, 404);
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}`)).status, 404);
    // The other option is untouched.
    assert.deepEqual(await readOption(ctx, bundle.id, extras.id), extras);
    const extrasRows = await rowsLeft(ctx, await footprintOf(ctx, 'acme', { optionId: extras.id }));
    assert.equal(extrasRows.price_book_prices, 4);
    const read = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.deepEqual([read.body.includedOptionsCount, read.body.addOnOptionsCount], [0, 1]);
  });

  test('POST .../options/{optionId}/clone copies the option, its products and its current price book', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    await insertPriceRows(ctx, base);
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${extras.id}`, { body: { displayOrder: 40 } });
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}`, {
      body: { configuration: { defaultOptionProductId: base.products[0].id } },
    });
    const source = await readOption(ctx, bundle.id, base.id);
    const sourceRows = await rowsLeft(ctx, await footprintOf(ctx, 'acme', { optionId: base.id }));

    const cloned = await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${base.id}/clone`);
    assert.equal(cloned.status, 201);
    const { option, priceBook } = cloned.body;
    assert.equal(cloned.headers.location, `/v1/bundles/${bundle.id}/options/${option.id}`);
    assert.match(option.id, optionId);
    assert.notEqual(option.id, base.id);
    assert.deepEqual(option, {
      id: option.id,
      accountId: 'acme',
      bundleId: bundle.id,
      type: 'INCLUDED',
      name: 'Base (copy)',
      priceBookId: priceBook.id,
      displayOrder: 41,
      configuration: { minCount: 1, maxCount: 1, defaultOptionProductId: option.products[0].id },
      description: 'Pick one base',
      products: source.products.map((p: { id: string }, i: number) => ({
        ...p,
        id: option.products[i].id,
        optionId: option.id,
        createdAt: option.createdAt,
        updatedAt: option.createdAt,
      })),
      createdAt: option.createdAt,
      updatedAt: option.createdAt,
    });
    for (const [i, product] of option.products.entries()) {
      assert.match(product.id, optionProductId);
      assert.notEqual(product.id, source.products[i].id);
    }
    assert.deepEqual(priceBook, {
      id: priceBook.id,
      accountId: 'acme',
      name: 'Base',
      description: null,
      bundleOptionId: option.id,
      isDeleted: false,
      effectiveStartDate: null,
      effectiveEndDate: null,
      createdAt: option.createdAt,
      updatedAt: option.createdAt,
    });
    assert.notEqual(priceBook.id, base.priceBookId);
    assert.deepEqual(await readOption(ctx, bundle.id, option.id), option);
    assert.deepEqual(
      await rowsLeft(ctx, await footprintOf(ctx, 'acme', { optionId: option.id })),
      sourceRows,
    );

    const entries = async (id: string) =>
      (
        await ctx.db
          .selectFrom('price_book_prices')
          .innerJoin('price_book_products', (join) =>
            join
              .onRef('price_book_products.price_book_id', '=', 'price_book_prices.price_book_id')
              .onRef('price_book_products.product_id', '=', 'price_book_prices.product_id'),
          )
          .select([
            'price_book_prices.product_id',
            'currency',
            'standard_price',
            'list_price',
            'adjustment',
            'allow_unit_price_editing',
          ])
          .where('price_book_prices.price_book_id', '=', id)
          .orderBy('price_book_prices.product_id')
          .orderBy('currency')
          .execute()
      ).map((row) => ({ ...row, allow_unit_price_editing: Boolean(row.allow_unit_price_editing) }));
    assert.deepEqual(await entries(priceBook.id), await entries(base.priceBookId));

    // Editing the copy leaves the source alone, and the bundle counts the copy.
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${option.id}`, {
      body: { name: 'Renamed', configuration: { maxCount: 5 } },
    });
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${option.id}/products/BASE-S`, {
      body: { properties: { size: 'XS' } },
    });
    await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${option.id}/BASE-L`);
    assert.deepEqual(await readOption(ctx, bundle.id, base.id), source);
    assert.deepEqual(await rowsLeft(ctx, await footprintOf(ctx, 'acme', { optionId: base.id })), sourceRows);
    const read = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.equal(read.body.includedOptionsCount, 2);
  });

  test('POST .../options/{optionId}/clone copies only the current price book, deleted or not', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [, extras] = options;
    await ctx.db
      .updateTable('price_books')
      .set({ is_deleted: true, effective_start_date: '2026-01-01T00:00:00.000Z' })
      .where('id', '=', extras.priceBookId)
      .execute();
    const cloned = await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${extras.id}/clone`);
    assert.equal(cloned.status, 201);
    assert.equal(cloned.body.priceBook.isDeleted, true);
    assert.equal(cloned.body.priceBook.effectiveStartDate, '2026-01-01T00:00:00.000Z');
    const books = await ctx.db
      .selectFrom('price_books')
      .select('id')
      .where('bundle_option_id', '=', cloned.body.option.id)
      .execute();
    assert.deepEqual(
      books.map((b) => b.id),
      [cloned.body.priceBook.id],
    );
  });

  test('POST .../options/{optionId}/clone: 404 for unknown or foreign ids, nothing copied', async () => {
    const { bundle, options } = await createBundle(ctx);
    const before = await snapshot(ctx);
    assert.equal(
      (await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${missingOption}/clone`)).status,
      404,
    );
    const other = await ctx.newKey('other');
    assert.equal(
      (await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${options[0].id}/clone`, { key: other }))
        .status,
      404,
    );
    assert.deepEqual(await snapshot(ctx), before);
  });

  test('POST .../options/{optionId}/products adds products and answers with all of them', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    const url = `/v1/bundles/${bundle.id}/options/${base.id}/products`;
    const added = await ctx.call('POST', url, {
      body: [
        { productId: 'BASE-XL', properties: { size: 'XL' }, configuration: { maxQuantity: 4 } },
        { productId: 'BASE-M', displayOrder: 0 },
        { productId: 'BASE-XXL' },
      ],
    });
    assert.equal(added.status, 201);
    assert.equal(added.headers.location, `/v1/bundles/${bundle.id}/options/${base.id}`);
    const [xl, medium, xxl] = ['BASE-XL', 'BASE-M', 'BASE-XXL'].map((id) =>
      added.body.find((p: { productId: string }) => p.productId === id),
    );
    assert.deepEqual(xl, {
      id: xl.id,
      accountId: 'acme',
      bundleId: bundle.id,
      optionId: base.id,
      productId: 'BASE-XL',
      properties: { size: 'XL' },
      displayOrder: 2,
      configuration: { minQuantity: null, maxQuantity: 4, readonlyQuantity: null },
      createdAt: xl.createdAt,
      updatedAt: xl.createdAt,
    });
    assert.ok(xl.createdAt >= base.products[0].createdAt);
    assert.equal(medium.displayOrder, 0);
    assert.equal(xxl.displayOrder, 3);
    // displayOrder, then id: BASE-S and BASE-M share 0, and BASE-S is older.
    assert.deepEqual(
      added.body.map((p: { productId: string }) => p.productId),
      ['BASE-S', 'BASE-M', 'BASE-L', 'BASE-XL', 'BASE-XXL'],
    );
    assert.deepEqual((await readOption(ctx, bundle.id, base.id)).products, added.body);
  });

  test('POST .../options/{optionId}/products: 409 for a product already there or repeated, 422, 400, 404', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    const url = `/v1/bundles/${bundle.id}/options/${base.id}/products`;
    const before = await snapshot(ctx);

    const already = await ctx.call('POST', url, { body: [{ productId: 'NEW' }, { productId: 'BASE-S' }] });
    assert.equal(already.status, 409);
    assert.equal(already.body.code, 'conflict');
    assert.deepEqual(problemPointers(already.body), ['/1/productId']);
    const repeated = await ctx.call('POST', url, { body: [{ productId: 'NEW' }, { productId: 'NEW' }] });
    assert.equal(repeated.status, 409);
    assert.deepEqual(problemPointers(repeated.body), ['/1/productId']);

    const rules = await ctx.call('POST', url, {
      body: [
        { productId: 'N1', configuration: { minQuantity: 2, maxQuantity: 1 } },
        { productId: 'N2', configuration: { minQuantity: 9, maxQuantity: 0 } },
      ],
    });
    assert.equal(rules.status, 422);
    assert.deepEqual(problemPointers(rules.body), [
      '/0/configuration/minQuantity',
      '/1/configuration/minQuantity',
    ]);

    for (const body of [[], {}, [{ productId: '' }], [{ productId: 'x'.repeat(129) }]]) {
      const response = await ctx.call('POST', url, { body });
      assert.equal(response.status, 400, JSON.stringify(body));
    }
    assert.equal(
      (
        await ctx.call('POST', `/v1/bundles/${bundle.id}/options/${missingOption}/products`, {
          body: [{ productId: 'A' }],
        })
      ).status,
      404,
    );
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('POST', url, { key: other, body: [{ productId: 'A' }] })).status, 404);
    assert.deepEqual(await snapshot(ctx), before);
  });

  test('PUT .../options/{optionId}/products/{productId} changes what is given and keeps the rest', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    const [small] = base.products;
    const url = `/v1/bundles/${bundle.id}/options/${base.id}/products/BASE-S`;
    const changed = await ctx.call('PUT', url, {
      body: {
        properties: { size: 'S', color: 'red' },
        configuration: { maxQuantity: 20, readonlyQuantity: false },
      },
    });
    assert.equal(changed.status, 200);
    assert.deepEqual(changed.body, {
      ...small,
      properties: { size: 'S', color: 'red' },
      configuration: { minQuantity: 1, maxQuantity: 20, readonlyQuantity: false },
      updatedAt: changed.body.updatedAt,
    });
    assert.ok(changed.body.updatedAt >= small.updatedAt);
    const moved = await ctx.call('PUT', url, { body: { displayOrder: 5 } });
    assert.deepEqual(moved.body, { ...changed.body, displayOrder: 5, updatedAt: moved.body.updatedAt });
    const read = await readOption(ctx, bundle.id, base.id);
    assert.deepEqual(
      read.products.map((p: { productId: string }) => p.productId),
      ['BASE-L', 'BASE-S'],
    );

    const rule = await ctx.call('PUT', url, { body: { configuration: { minQuantity: 21 } } });
    assert.equal(rule.status, 422);
    assert.equal(rule.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(rule.body), ['/configuration/minQuantity']);
    const bad = await ctx.call('PUT', url, { body: { configuration: { minQuantity: -1 }, productId: 'X' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(problemPointers(bad.body), ['/configuration/minQuantity', '/productId']);
    assert.equal(
      (await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/NOPE`, { body: {} }))
        .status,
      404,
    );
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('PUT', url, { key: other, body: { displayOrder: 0 } })).status, 404);
    assert.deepEqual((await readOption(ctx, bundle.id, base.id)).products, read.products);
  });

  test('DELETE .../options/{optionId}/{productId} answers the remaining products and drops its entries', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    await insertPriceRows(ctx, base);
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}`, {
      body: { configuration: { defaultOptionProductId: base.products[0].id } },
    });
    const other = await ctx.newKey('other');
    assert.equal(
      (await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}/BASE-S`, { key: other })).status,
      404,
    );

    const removed = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}/BASE-S`);
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, [base.products[1]]);
    const left = async (
      table: 'price_book_products' | 'price_book_prices' | 'product_variants',
      productId: string,
    ) =>
      (
        await ctx.db
          .selectFrom(table)
          .select('product_id')
          .where('price_book_id', '=', base.priceBookId)
          .where('product_id', '=', productId)
          .execute()
      ).length;
    for (const table of ['price_book_products', 'price_book_prices', 'product_variants'] as const) {
      assert.equal(await left(table, 'BASE-S'), 0, table);
    }
    assert.equal(await left('price_book_prices', 'BASE-L'), 2);
    // It was the default; the option no longer names it.
    const read = await readOption(ctx, bundle.id, base.id);
    assert.equal(read.configuration.defaultOptionProductId, null);

    assert.equal(
      (await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}/BASE-S`)).status,
      404,
    );
    assert.equal(
      (await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${missingOption}/BASE-L`)).status,
      404,
    );
    const last = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${base.id}/BASE-L`);
    assert.deepEqual(last.body, []);
  });

  test('product ids with reserved URL characters work in paths', async () => {
    const { bundle, options } = await createBundle(ctx, {
      options: [{ name: 'odd', products: [{ productId: 'a/b c?d' }, { productId: 'plain' }] }],
    });
    const [option] = options;
    const encoded = encodeURIComponent('a/b c?d');
    const changed = await ctx.call(
      'PUT',
      `/v1/bundles/${bundle.id}/options/${option.id}/products/${encoded}`,
      {
        body: { displayOrder: 3 },
      },
    );
    assert.equal(changed.status, 200);
    assert.equal(changed.body.productId, 'a/b c?d');
    const removed = await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${option.id}/${encoded}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(
      removed.body.map((p: { productId: string }) => p.productId),
      ['plain'],
    );
  });
});
