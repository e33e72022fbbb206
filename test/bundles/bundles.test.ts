import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { bundlePageQuery, pageWithKey } from '../../src/bundles/bundles.repository.ts';
import { describeEachDatabase, type TestContext } from '../helpers/app.ts';
import { createBundle, footprintOf, insertPriceRows, readOption, rowsLeft } from '../helpers/factories.ts';

const bundleId = /^bnd_[0-9A-HJKMNP-TV-Z]{26}$/;

function problemPointers(body: { errors?: { pointer: string }[] }): string[] {
  return [...new Set((body.errors ?? []).map((e) => e.pointer))].sort();
}

async function countRows(
  ctx: TestContext,
  table: 'bundles' | 'bundle_options' | 'price_books',
): Promise<number> {
  const row = await ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describeEachDatabase('bundles', (ctx) => {
  test('POST /v1/bundles creates a bundle with inline options, products and a price book per option', async () => {
    const created = await ctx.call('POST', '/v1/bundles', {
      body: {
        header: { productId: 'CRM-HDR', properties: { name: 'Laptop bundle', sku: null } },
        options: [
          {
            name: 'Memory',
            type: 'INCLUDED',
            description: 'RAM',
            configuration: { minCount: 1, maxCount: 1 },
            products: [
              {
                productId: 'RAM-8',
                properties: { gb: '8' },
                configuration: { minQuantity: 1, maxQuantity: 2 },
              },
              { productId: 'RAM-16', displayOrder: 5 },
            ],
          },
          { name: 'Bag' },
          { name: 'Mouse', type: 'ADD_ON', displayOrder: 10 },
        ],
      },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.id, bundleId);
    assert.equal(created.headers.location, `/v1/bundles/${created.body.id}`);
    assert.deepEqual(created.body, {
      id: created.body.id,
      accountId: 'acme',
      isActive: true,
      includedOptionsCount: 1,
      addOnOptionsCount: 2,
      header: { productId: 'CRM-HDR', properties: { name: 'Laptop bundle', sku: null } },
      clonedBundleTempName: null,
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
    });
    assert.match(created.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const options = await ctx.db
      .selectFrom('bundle_options')
      .selectAll()
      .where('bundle_id', '=', created.body.id)
      .orderBy('display_order')
      .execute();
    assert.deepEqual(
      options.map((o) => [o.name, o.type, o.display_order]),
      [
        ['Memory', 'INCLUDED', 0],
        ['Bag', 'ADD_ON', 1],
        ['Mouse', 'ADD_ON', 10],
      ],
    );
    const memory = await readOption(ctx, created.body.id, options[0]?.id as string);
    assert.deepEqual(memory, {
      id: memory.id,
      accountId: 'acme',
      bundleId: created.body.id,
      type: 'INCLUDED',
      name: 'Memory',
      priceBookId: memory.priceBookId,
      displayOrder: 0,
      configuration: { minCount: 1, maxCount: 1, defaultOptionProductId: null },
      description: 'RAM',
      products: [
        {
          id: memory.products[0].id,
          accountId: 'acme',
          bundleId: created.body.id,
          optionId: memory.id,
          productId: 'RAM-8',
          properties: { gb: '8' },
          displayOrder: 0,
          configuration: { minQuantity: 1, maxQuantity: 2, readonlyQuantity: null },
          createdAt: created.body.createdAt,
          updatedAt: created.body.createdAt,
        },
        {
          id: memory.products[1].id,
          accountId: 'acme',
          bundleId: created.body.id,
          optionId: memory.id,
          productId: 'RAM-16',
          properties: {},
          displayOrder: 5,
          configuration: { minQuantity: null, maxQuantity: null, readonlyQuantity: null },
          createdAt: created.body.createdAt,
          updatedAt: created.body.createdAt,
        },
      ],
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
    });
    for (const option of options) {
      const books = await ctx.db
        .selectFrom('price_books')
        .selectAll()
        .where('bundle_option_id', '=', option.id)
        .execute();
      assert.equal(books.length, 1);
      assert.equal(books[0]?.id, option.price_book_id);
      assert.equal(books[0]?.name, option.name);
      assert.equal(Boolean(books[0]?.is_deleted), false);
    }
  });

  test('POST /v1/bundles honours isActive and accepts a bundle without options', async () => {
    const created = await ctx.call('POST', '/v1/bundles', {
      body: { header: { productId: 'P', properties: {} }, isActive: false },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.isActive, false);
    assert.equal(created.body.includedOptionsCount, 0);
    assert.equal(created.body.addOnOptionsCount, 0);
  });

  test('POST /v1/bundles answers 400 with pointers for a body that breaks the schema', async () => {
    const cases: [unknown, string[]][] = [
      [{}, ['/header']],
      [{ header: { productId: '', properties: {} } }, ['/header/productId']],
      [{ header: { productId: 'P', properties: { a: 1 } } }, ['/header/properties/a']],
      [{ header: { productId: 'P', properties: {} }, isActive: 'yes' }, ['/isActive']],
      [{ header: { productId: 'P', properties: {} }, extra: 1 }, ['/extra']],
      [{ header: { productId: 'P', properties: {} }, options: [{ name: '' }] }, ['/options/0/name']],
      [
        { header: { productId: 'P', properties: {} }, options: [{ name: 'x', type: 'OPTIONAL' }] },
        ['/options/0/type'],
      ],
    ];
    for (const [body, pointers] of cases) {
      const response = await ctx.call('POST', '/v1/bundles', { body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.code, 'validation_failed');
      for (const p of pointers)
        assert.ok(problemPointers(response.body).includes(p), `${p} in ${response.text}`);
    }
    const malformed = await ctx.call('POST', '/v1/bundles', { body: '{"header":' });
    assert.equal(malformed.status, 400);
  });

  test('POST /v1/bundles answers 422 listing every rule broken, and writes nothing', async () => {
    const before = await countRows(ctx, 'bundles');
    const response = await ctx.call('POST', '/v1/bundles', {
      body: {
        header: { productId: 'P', properties: {} },
        options: [
          { name: 'ok', products: [{ productId: 'A', configuration: { minQuantity: 5, maxQuantity: 2 } }] },
          {
            name: 'bad',
            configuration: {
              minCount: 3,
              maxCount: 1,
              defaultOptionProductId: 'opp_01M7Z4FGHN62EHBXHK2BWGA38R',
            },
          },
        ],
      },
    });
    assert.equal(response.status, 422);
    assert.equal(response.body.code, 'rule_violation');
    assert.deepEqual(problemPointers(response.body), [
      '/options/0/products/0/configuration/minQuantity',
      '/options/1/configuration/defaultOptionProductId',
      '/options/1/configuration/minCount',
    ]);
    assert.equal(await countRows(ctx, 'bundles'), before);
  });

  test('POST /v1/bundles answers 409 when an inline option repeats a productId, and writes nothing', async () => {
    const before = [await countRows(ctx, 'bundles'), await countRows(ctx, 'bundle_options')];
    const response = await ctx.call('POST', '/v1/bundles', {
      body: {
        header: { productId: 'P', properties: {} },
        options: [{ name: 'o', products: [{ productId: 'A' }, { productId: 'B' }, { productId: 'A' }] }],
      },
    });
    assert.equal(response.status, 409);
    assert.equal(response.body.code, 'conflict');
    assert.deepEqual(problemPointers(response.body), ['/options/0/products/2/productId']);
    assert.deepEqual([await countRows(ctx, 'bundles'), await countRows(ctx, 'bundle_options')], before);
  });

  test('write endpoints need a key, and a read-only key may only read', async () => {
    const body = { header: { productId: 'P', properties: {} } };
    assert.equal((await ctx.call('POST', '/v1/bundles', { key: null, body })).status, 401);
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assert.equal((await ctx.call('POST', '/v1/bundles', { key: readOnly, body })).status, 403);
    const { bundle } = await createBundle(ctx);
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`, { key: readOnly })).status, 200);
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}`, { key: readOnly })).status, 403);
  });

  test('GET /v1/bundles/{bundleId} answers the list form; unknown and foreign ids are 404', async () => {
    const { bundle } = await createBundle(ctx);
    const read = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, {
      id: bundle.id,
      accountId: 'acme',
      isActive: true,
      includedOptionsCount: 1,
      addOnOptionsCount: 1,
      header: { productId: 'HDR-1', properties: { name: 'Header' } },
      clonedBundleTempName: null,
      createdAt: bundle.createdAt,
      updatedAt: bundle.updatedAt,
    });
    for (const id of ['bnd_01M7Z4FGHN62EHBXHK2BWGA38R', 'nope']) {
      const missing = await ctx.call('GET', `/v1/bundles/${id}`);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'not_found');
    }
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`, { key: other })).status, 404);
  });

  test('option counts follow the options that exist', async () => {
    const { bundle, options } = await createBundle(ctx);
    const added = await ctx.call('POST', `/v1/bundles/${bundle.id}/options`, {
      body: { name: 'More', type: 'INCLUDED' },
    });
    assert.equal(added.status, 201);
    let read = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.deepEqual([read.body.includedOptionsCount, read.body.addOnOptionsCount], [2, 1]);
    await ctx.call('DELETE', `/v1/bundles/${bundle.id}/options/${options[1].id}`);
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${added.body.id}`, { body: { type: 'ADD_ON' } });
    read = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.deepEqual([read.body.includedOptionsCount, read.body.addOnOptionsCount], [1, 1]);
  });

  test('PATCH /v1/bundles/{bundleId} changes the fields given and keeps the others', async () => {
    const { bundle } = await createBundle(ctx);
    const deactivated = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, { body: { isActive: false } });
    assert.equal(deactivated.status, 200);
    // updatedAt moves on with each change; createdAt stays.
    const { updatedAt } = deactivated.body;
    assert.ok(updatedAt >= bundle.updatedAt, updatedAt);
    assert.deepEqual(deactivated.body, { ...bundle, isActive: false, updatedAt });

    const named = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: { clonedBundleTempName: 'Draft' },
    });
    assert.ok(named.body.updatedAt >= updatedAt);
    assert.deepEqual(named.body, {
      ...bundle,
      isActive: false,
      clonedBundleTempName: 'Draft',
      updatedAt: named.body.updatedAt,
    });

    // Same product, new properties: not a new header product, so the temporary name stays.
    const sameProduct = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: { header: { productId: 'HDR-1', properties: { name: 'Renamed' } } },
    });
    assert.equal(sameProduct.body.clonedBundleTempName, 'Draft');
    assert.deepEqual(sameProduct.body.header, { productId: 'HDR-1', properties: { name: 'Renamed' } });

    const relinked = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: { header: { productId: 'HDR-2', properties: {} } },
    });
    assert.equal(relinked.status, 200);
    assert.deepEqual(relinked.body, {
      ...bundle,
      isActive: false,
      header: { productId: 'HDR-2', properties: {} },
      clonedBundleTempName: null,
      updatedAt: relinked.body.updatedAt,
    });
    assert.deepEqual((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).body, relinked.body);

    const relinkedNamed = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: { header: { productId: 'HDR-3', properties: {} }, clonedBundleTempName: 'Kept' },
    });
    assert.equal(relinkedNamed.body.clonedBundleTempName, 'Kept');
  });

  test('PATCH /v1/bundles/{bundleId}: 400 with pointer, 404, and another account changes nothing', async () => {
    const { bundle } = await createBundle(ctx);
    const bad = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      body: { isActive: 1, clonedBundleTempName: '' },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(problemPointers(bad.body), ['/clonedBundleTempName', '/isActive']);
    assert.equal(
      (await ctx.call('PATCH', '/v1/bundles/bnd_01M7Z4FGHN62EHBXHK2BWGA38R', { body: { isActive: false } }))
        .status,
      404,
    );
    const other = await ctx.newKey('other');
    const foreign = await ctx.call('PATCH', `/v1/bundles/${bundle.id}`, {
      key: other,
      body: { isActive: false },
    });
    assert.equal(foreign.status, 404);
    assert.deepEqual((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).body, bundle);
  });

  test('DELETE /v1/bundles/{bundleId} removes every row of the bundle', async () => {
    const { bundle, options } = await createBundle(ctx);
    for (const option of options) await insertPriceRows(ctx, option);
    const footprint = await footprintOf(ctx, 'acme', { bundleId: bundle.id });
    const before = await rowsLeft(ctx, footprint);
    assert.deepEqual(before, {
      bundles: 1,
      bundle_options: 2,
      option_products: 4,
      price_books: 2,
      price_book_products: 4,
      price_book_prices: 8,
      product_variants: 2,
    });
    const deleted = await ctx.call('DELETE', `/v1/bundles/${bundle.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const after = await rowsLeft(ctx, footprint);
    assert.ok(
      Object.values(after).every((n) => n === 0),
      JSON.stringify(after),
    );
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).status, 404);
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}/options/${options[0].id}`)).status, 404);
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}`)).status, 404);
  });

  test('DELETE /v1/bundles/{bundleId} with another account key is a 404 and deletes nothing', async () => {
    const { bundle } = await createBundle(ctx);
    const footprint = await footprintOf(ctx, 'acme', { bundleId: bundle.id });
    const before = await rowsLeft(ctx, footprint);
    const other = await ctx.newKey('other');
    assert.equal((await ctx.call('DELETE', `/v1/bundles/${bundle.id}`, { key: other })).status, 404);
    assert.deepEqual(await rowsLeft(ctx, footprint), before);
  });

  test('POST /v1/bundles/{bundleId}/clone deep-copies the bundle with new ids everywhere', async () => {
    const { bundle, options } = await createBundle(ctx);
    for (const option of options) await insertPriceRows(ctx, option);
    const [base, extras] = options;
    // A default product, a deleted earlier price book with dates, and a current one made after it.
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}`, {
      body: { configuration: { defaultOptionProductId: base.products[1].id } },
    });
    await ctx.db
      .updateTable('price_books')
      .set({
        is_deleted: true,
        effective_start_date: '2026-01-01T00:00:00.000Z',
        effective_end_date: '2026-06-01T00:00:00.000Z',
      })
      .where('id', '=', extras.priceBookId)
      .execute();
    await ctx.db
      .insertInto('price_books')
      .values({
        account_id: 'acme',
        id: 'pb_01M7Z4FGHN62EHBXHK2BWGA38Z',
        bundle_option_id: extras.id,
        name: 'Extras 2026',
        description: 'second half',
        is_deleted: false,
        effective_start_date: '2026-06-01T00:00:00.000Z',
        effective_end_date: null,
        version: 1,
        created_at: '2026-06-01T00:00:00.000Z',
        updated_at: '2026-06-01T00:00:00.000Z',
      })
      .execute();
    await ctx.db
      .updateTable('bundle_options')
      .set({ price_book_id: 'pb_01M7Z4FGHN62EHBXHK2BWGA38Z' })
      .where('id', '=', extras.id)
      .execute();

    const cloned = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { body: {} });
    assert.equal(cloned.status, 201);
    const copyId = cloned.body.id;
    assert.notEqual(copyId, bundle.id);
    assert.equal(cloned.headers.location, `/v1/bundles/${copyId}`);
    assert.deepEqual(cloned.body, {
      id: copyId,
      accountId: 'acme',
      isActive: false,
      includedOptionsCount: 1,
      addOnOptionsCount: 1,
      header: bundle.header,
      clonedBundleTempName: `Copy of ${bundle.id}`,
      createdAt: cloned.body.createdAt,
      updatedAt: cloned.body.createdAt,
    });
    assert.ok(cloned.body.createdAt >= bundle.createdAt);

    const source = await footprintOf(ctx, 'acme', { bundleId: bundle.id });
    const copy = await footprintOf(ctx, 'acme', { bundleId: copyId });
    assert.deepEqual(await rowsLeft(ctx, copy), await rowsLeft(ctx, source));
    assert.equal(copy.priceBookIds.length, 3);
    for (const id of [...copy.optionIds, ...copy.priceBookIds]) {
      assert.ok(!source.optionIds.includes(id) && !source.priceBookIds.includes(id), `${id} is new`);
    }

    const copiedOptions = await ctx.db
      .selectFrom('bundle_options')
      .select('id')
      .where('bundle_id', '=', copyId)
      .orderBy('display_order')
      .execute();
    const [copyBase, copyExtras] = await Promise.all(copiedOptions.map((o) => readOption(ctx, copyId, o.id)));
    // A copy is made now: its ids, places and instants are its own.
    const strip = (option: typeof base) => ({
      ...option,
      id: undefined,
      bundleId: undefined,
      priceBookId: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      configuration: { ...option.configuration, defaultOptionProductId: undefined },
      products: option.products.map((p: typeof base) => ({
        ...p,
        id: undefined,
        bundleId: undefined,
        optionId: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      })),
    });
    const sourceBase = await readOption(ctx, bundle.id, base.id);
    const sourceExtras = await readOption(ctx, bundle.id, extras.id);
    assert.deepEqual(strip(copyBase), strip(sourceBase));
    assert.deepEqual(strip(copyExtras), strip(sourceExtras));
    assert.equal(copyBase.configuration.defaultOptionProductId, copyBase.products[1].id);
    assert.notEqual(copyBase.products[1].id, base.products[1].id);
    for (const product of copyBase.products) {
      assert.equal(product.bundleId, copyId);
      assert.equal(product.optionId, copyBase.id);
    }

    // Every price book of the option is copied, deleted ones and dates included; the current one is remapped.
    const copiedBooks = await ctx.db
      .selectFrom('price_books')
      .selectAll()
      .where('bundle_option_id', '=', copyExtras.id)
      .orderBy('name')
      .execute();
    assert.deepEqual(
      copiedBooks.map((b) => [
        b.name,
        Boolean(b.is_deleted),
        b.effective_start_date,
        b.effective_end_date,
        b.description,
      ]),
      [
        ['Extras', true, '2026-01-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z', null],
        ['Extras 2026', false, '2026-06-01T00:00:00.000Z', null, 'second half'],
      ],
    );
    assert.equal(copyExtras.priceBookId, copiedBooks[1]?.id);

    const pricesOf = async (priceBookId: string) =>
      (
        await ctx.db
          .selectFrom('price_book_prices')
          .select(['product_id', 'currency', 'standard_price', 'list_price', 'adjustment'])
          .where('price_book_id', '=', priceBookId)
          .orderBy('product_id')
          .orderBy('currency')
          .execute()
      ).map((p) => ({ ...p }));
    assert.deepEqual(await pricesOf(copyBase.priceBookId), await pricesOf(base.priceBookId));
    assert.equal((await pricesOf(copyBase.priceBookId)).length, 4);
    const variants = await ctx.db
      .selectFrom('product_variants')
      .select(['product_id', 'template', 'properties'])
      .where('price_book_id', '=', copyBase.priceBookId)
      .execute();
    assert.deepEqual(
      variants.map((v) => ({ ...v })),
      [
        {
          product_id: 'BASE-S',
          template: '{size}',
          properties: JSON.stringify([{ name: 'size', values: ['S', 'L'] }]),
        },
      ],
    );

    // Editing the copy leaves the source alone.
    await ctx.call('PUT', `/v1/bundles/${copyId}/options/${copyBase.id}`, { body: { name: 'Changed' } });
    await ctx.call('DELETE', `/v1/bundles/${copyId}/options/${copyExtras.id}/EXTRA-SETUP`);
    await ctx.call('PATCH', `/v1/bundles/${copyId}`, { body: { isActive: true } });
    assert.deepEqual(await readOption(ctx, bundle.id, base.id), sourceBase);
    assert.deepEqual(await readOption(ctx, bundle.id, extras.id), sourceExtras);
    assert.deepEqual(
      await rowsLeft(ctx, source),
      await rowsLeft(ctx, await footprintOf(ctx, 'acme', { bundleId: bundle.id })),
    );
    assert.equal((await ctx.call('GET', `/v1/bundles/${bundle.id}`)).body.isActive, true);
    assert.equal((await pricesOf(base.priceBookId)).length, 4);

    // Deleting the source leaves the copy whole.
    const copyRows = await rowsLeft(ctx, copy);
    await ctx.call('DELETE', `/v1/bundles/${bundle.id}`);
    assert.deepEqual(await rowsLeft(ctx, copy), copyRows);
  });

  test('POST /v1/bundles/{bundleId}/clone takes tempName, needs no body, and answers 400, 404', async () => {
    const { bundle } = await createBundle(ctx, { options: [] });
    const named = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, {
      body: { tempName: 'Spring promo' },
    });
    assert.equal(named.status, 201);
    assert.equal(named.body.clonedBundleTempName, 'Spring promo');
    assert.deepEqual([named.body.includedOptionsCount, named.body.addOnOptionsCount], [0, 0]);
    const bodiless = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`);
    assert.equal(bodiless.status, 201);
    assert.equal(bodiless.body.clonedBundleTempName, `Copy of ${bundle.id}`);
    const bad = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { body: { tempName: '' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(problemPointers(bad.body), ['/tempName']);
    assert.equal(
      (await ctx.call('POST', '/v1/bundles/bnd_01M7Z4FGHN62EHBXHK2BWGA38R/clone', { body: {} })).status,
      404,
    );
  });

  test('POST /v1/bundles/{bundleId}/clone with another account key is a 404 and copies nothing', async () => {
    const { bundle } = await createBundle(ctx);
    const before = await countRows(ctx, 'bundles');
    const other = await ctx.newKey('other');
    assert.equal(
      (await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { key: other, body: {} })).status,
      404,
    );
    assert.equal(await countRows(ctx, 'bundles'), before);
  });

  test('GET /v1/bundles lists a page, filters by isActive, and validates its query', async () => {
    const key = await ctx.newKey('lister');
    const active = await createBundle(ctx, { key });
    const inactive = await createBundle(ctx, { key, isActive: false, options: [] });
    const all = await ctx.call('GET', '/v1/bundles', { key });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, { bundles: [active.bundle, inactive.bundle] });
    const onlyInactive = await ctx.call('GET', '/v1/bundles', { key, query: { isActive: 'false' } });
    assert.deepEqual(onlyInactive.body, { bundles: [inactive.bundle] });
    const onlyActive = await ctx.call('GET', '/v1/bundles', { key, query: { isActive: 'true', limit: '1' } });
    assert.deepEqual(onlyActive.body, { bundles: [active.bundle] });

    for (const [query, pointer] of [
      [{ limit: '0' }, '/limit'],
      [{ limit: '101' }, '/limit'],
      [{ limit: 'ten' }, '/limit'],
      [{ isActive: 'maybe' }, '/isActive'],
      [{ nextKey: 'not-a-key' }, '/nextKey'],
      [{ nextKey: Buffer.from('bnd_X').toString('base64url') }, '/nextKey'],
      [{ nextKey: `${Buffer.from(active.bundle.id).toString('base64url')}=` }, '/nextKey'],
      [{ sort: 'id' }, '/sort'],
    ] as const) {
      const response = await ctx.call('GET', '/v1/bundles', { key, query });
      assert.equal(response.status, 400, JSON.stringify(query));
      assert.equal(response.body.errors[0].in, 'query');
      assert.deepEqual(problemPointers(response.body), [pointer]);
    }
    // Another account sees none of these.
    const other = await ctx.newKey('nobody');
    assert.deepEqual((await ctx.call('GET', '/v1/bundles', { key: other })).body, { bundles: [] });
  });

  test('GET /v1/bundles walks every page once while bundles come and go', async () => {
    const key = await ctx.newKey('walker');
    const make = async () =>
      (
        await ctx.call('POST', '/v1/bundles', {
          key,
          body: { header: { productId: 'W', properties: {} }, options: [{ name: 'o', type: 'INCLUDED' }] },
        })
      ).body.id as string;
    const initial: string[] = [];
    for (let i = 0; i < 23; i++) initial.push(await make());
    // Deleted while walking; everything else in `initial` exists throughout.
    const doomed = new Set([initial[3], initial[12], initial[20]]);
    const seen: string[] = [];
    let nextKey: string | undefined;
    let pages = 0;
    do {
      const page = await ctx.call('GET', '/v1/bundles', {
        key,
        query: nextKey === undefined ? { limit: '5' } : { limit: '5', nextKey },
      });
      assert.equal(page.status, 200);
      assert.ok(page.body.bundles.length <= 5);
      for (const b of page.body.bundles) assert.equal(b.includedOptionsCount, 1);
      seen.push(...page.body.bundles.map((b: { id: string }) => b.id));
      nextKey = page.body.nextKey;
      pages++;
      if (pages === 1) {
        for (const id of doomed) await ctx.call('DELETE', `/v1/bundles/${id}`, { key });
      }
      if (pages === 2) await make();
    } while (nextKey !== undefined);
    assert.ok(pages >= 5);
    assert.equal(new Set(seen).size, seen.length, 'no duplicates');
    for (const id of initial) if (!doomed.has(id)) assert.ok(seen.includes(id), `${id} was seen`);
    assert.deepEqual(seen, [...seen].sort(), 'in id order');
  });

  test('GET /v1/bundles has no nextKey on a last page that is exactly full', async () => {
    const key = await ctx.newKey('exact');
    for (let i = 0; i < 4; i++) await createBundle(ctx, { key, options: [] });
    const first = await ctx.call('GET', '/v1/bundles', { key, query: { limit: '2' } });
    assert.equal(first.body.bundles.length, 2);
    assert.equal(typeof first.body.nextKey, 'string');
    const second = await ctx.call('GET', '/v1/bundles', {
      key,
      query: { limit: '2', nextKey: first.body.nextKey },
    });
    assert.equal(second.body.bundles.length, 2);
    assert.equal('nextKey' in second.body, false);
  });

  test('the page query, and on SQLite the statement with the key, is an index range scan in id order, with no sort, on any page', async () => {
    for (const [isActive, productId] of [
      [undefined, undefined],
      [true, undefined],
      [undefined, 'P-1'],
    ] as const) {
      const query = bundlePageQuery(ctx.db, 'acme', {
        afterId: 'bnd_01M7Z4FGHN62EHBXHK2BWGA38R',
        isActive,
        productId,
        limit: 26,
      }).compile();
      if (ctx.dialect === 'sqlite') {
        const plan = await ctx.db.executeQuery<{ detail: string }>({
          ...query,
          sql: `explain query plan ${query.sql}`,
        });
        const details = plan.rows.map((r) => r.detail).join('\n');
        assert.match(
          details,
          productId !== undefined
            ? /SEARCH bundles USING INDEX bundles_header_product_idx/
            : isActive === undefined
              ? /SEARCH bundles USING (PRIMARY KEY|INDEX sqlite_autoindex_bundles_1)/
              : /SEARCH bundles USING INDEX bundles_active_idx/,
        );
        assert.doesNotMatch(details, /TEMP B-TREE/);
        // The statement a list runs joins the key's row to the bundles themselves: the same range, read in id
        // order up to the limit, with nothing copied aside or sorted.
        const statement = pageWithKey(ctx.db, {
          accountId: 'acme',
          keyId: 'key_01M7Z4FGHN62EHBXHK2BWGA38R',
          afterId: 'bnd_01M7Z4FGHN62EHBXHK2BWGA38R',
          isActive,
          productId,
          limit: 26,
        });
        const statementPlan = await ctx.db.executeQuery<{ detail: string }>({
          ...statement,
          sql: `explain query plan ${statement.sql}`,
        });
        const steps = statementPlan.rows.map((r) => r.detail);
        assert.match(
          steps[0] ?? '',
          /SEARCH k USING INDEX sqlite_autoindex_api_keys_1 \(account_id=\? AND id=\?\)/,
        );
        assert.match(
          steps[1] ?? '',
          productId !== undefined
            ? /SEARCH b USING INDEX bundles_header_product_idx .*id>\?.*LEFT-JOIN/
            : isActive === undefined
              ? /SEARCH b USING (PRIMARY KEY|INDEX sqlite_autoindex_bundles_1) \(account_id=\? AND id>\?\) LEFT-JOIN/
              : /SEARCH b USING INDEX bundles_active_idx .*id>\?.*LEFT-JOIN/,
        );
        assert.doesNotMatch(steps.join('\n'), /TEMP B-TREE|MATERIALIZE/);
      } else {
        const plan = await ctx.db.transaction().execute(async (tx) => {
          // The tables are tiny in tests; forbid the sequential scan so the plan shows what a large table gets.
          await sql`set local enable_seqscan = off`.execute(tx);
          return tx.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `explain ${query.sql}` });
        });
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        // Which of the two indexes serves the filter is the planner's call from table statistics; either
        // way it is a range scan in id order that stops at the limit.
        assert.match(
          text,
          productId === undefined ? /Index Scan using bundles_(pk|active_idx)/ : /bundles_header_product_idx/,
        );
        assert.doesNotMatch(text, /Sort/);
      }
    }
  });
});
