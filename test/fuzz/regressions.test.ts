import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';
import { createBundle, insertPriceRows } from '../helpers/factories.ts';

// Cases the fuzzer found, kept as plain examples so they stay fixed whatever the fuzzer draws next time.
describeEachDatabase('fuzzer findings', (ctx) => {
  test('U+0000 anywhere in a request is a 400 with a pointer, on both databases (PostgreSQL text cannot hold it)', async () => {
    const { bundle } = await createBundle(ctx, { options: [] });
    const cases = [
      { method: 'GET', url: '/v1/bundles/bnd%00x', in: 'path', pointer: '/bundleId' },
      { method: 'GET', url: '/v1/bundles-details?bundleIds=a%00', in: 'query', pointer: '/bundleIds' },
      {
        method: 'POST',
        url: '/v1/bundles',
        body: { header: { productId: 'P\u0000', properties: {} } },
        in: 'body',
        pointer: '/header/productId',
      },
      {
        method: 'PATCH',
        url: `/v1/bundles/${bundle.id}`,
        body: { header: { productId: 'P', properties: { 'a\u0000': 'x' } } },
        in: 'body',
        pointer: '/header/properties/a\u0000',
      },
    ] as const;
    for (const { method, url, in: where, pointer, ...rest } of cases) {
      const result = await ctx.call(method, url, 'body' in rest ? { body: rest.body } : {});
      assertProblem(result, 400, 'validation_failed');
      assert.deepEqual(
        result.body.errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
        [[where, pointer]],
        `${method} ${url}`,
      );
    }
    const after = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    assert.equal(after.body.header.productId, bundle.header.productId, 'the refused PATCH changed nothing');
  });

  test('a bundle clone without a body is documented as allowed, and is; a null body is refused', async () => {
    await ctx.app.ready();
    const document = ctx.app.swagger() as {
      paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
    };
    assert.equal(document.paths['/v1/bundles/{bundleId}/clone']?.post?.requestBody?.required, false);
    const { bundle } = await createBundle(ctx, { options: [] });
    const copy = await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`);
    assert.equal(copy.status, 201, copy.text);
    // A JSON null is a body, and not the object the schema asks for.
    assertProblem(
      await ctx.call('POST', `/v1/bundles/${bundle.id}/clone`, { body: 'null' }),
      400,
      'validation_failed',
    );
  });

  test('seed 48932065: a property name over 200 characters in `properties` is a 400 at /properties', async () => {
    const { bundle } = await createBundle(ctx, { options: [] });
    const details = (properties: string) =>
      ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: bundle.id, properties } });
    const long = await details(`color,${'x'.repeat(201)}`);
    assertProblem(long, 400, 'validation_failed');
    assert.deepEqual(
      long.body.errors.map((e: { code: string; in: string; pointer: string }) => [e.code, e.in, e.pointer]),
      [['name_too_long', 'query', '/properties']],
    );
    // Characters, not UTF-16 units: 200 astral characters are 400 units and still a valid name.
    const astral = await details('😀'.repeat(200));
    assert.equal(astral.status, 200, astral.text);
    assert.deepEqual(Object.keys(astral.body.bundles[0].header.properties), ['😀'.repeat(200)]);
    const many = await details(Array.from({ length: 201 }, (_, i) => `p${i}`).join(','));
    assertProblem(many, 400, 'validation_failed');
    assert.deepEqual(
      many.body.errors.map((e: { code: string; pointer: string }) => [e.code, e.pointer]),
      [['too_many_names', '/properties']],
    );
    // Names are trimmed and kept once before they are counted.
    const most = await details([...Array.from({ length: 200 }, (_, i) => `p${i}`), ' p0 ', ''].join(','));
    assert.equal(most.status, 200, most.text);
    assert.equal(Object.keys(most.body.bundles[0].header.properties).length, 200);
  });

  test('seeds 414346715 and 414542226: a catalogue file is checked in the order any body is', async () => {
    const apply = (body: unknown, key: string) =>
      ctx.call('POST', '/v1/catalogue/apply', {
        query: { dryRun: 'true' },
        body,
        headers: { 'idempotency-key': key },
      });
    const good = { formatVersion: 1, bundles: [] };
    assert.equal((await apply(good, 'used-once')).status, 200);
    // The key now holds another request: a file that breaks the schema still gets its own problems, not a 409.
    const broken = await apply({ formatVersion: 1, bundles: [{ header: {} }] }, 'used-once');
    assertProblem(broken, 400, 'validation_failed');
    assert.ok(broken.body.errors.some((e: { pointer: string }) => e.pointer.startsWith('/bundles/0')));
    // A rule across its records is found after the query, the headers and the key, as other routes find theirs.
    const duplicate = { productId: 'DUP', properties: {} };
    const clashing = { formatVersion: 1, bundles: [{ header: duplicate }, { header: duplicate }] };
    assertProblem(await apply(clashing, 'used-once'), 409, 'idempotency_key_reused');
    assertProblem(await apply(clashing, 'fresh'), 422);
    const badQuery = await ctx.call('POST', '/v1/catalogue/apply', {
      query: { dryRun: 'maybe' },
      body: clashing,
    });
    assertProblem(badQuery, 400, 'validation_failed');
    assert.equal(badQuery.body.errors[0].in, 'query');
    // The schema's refusal was not kept: the first request replays.
    const replay = await apply(good, 'used-once');
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });
  test('seed 432803938: a priced-product search with an offset past the largest exact integer is a 400, not a 500', async () => {
    const { options } = await createBundle(ctx);
    await insertPriceRows(ctx, options[0]);
    const url = `/v1/pricebooks/${options[0].priceBookId}/pricedProducts`;
    // 1e+300 is an integer to JSON Schema; PostgreSQL's OFFSET (a bigint) could not take it.
    for (const offset of ['1e+300', '9007199254740992']) {
      const refused = await ctx.call('GET', url, { query: { offset } });
      assertProblem(refused, 400, 'validation_failed');
      assert.deepEqual(
        refused.body.errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
        [['query', '/offset']],
      );
    }
    const last = await ctx.call('GET', url, { query: { offset: String(Number.MAX_SAFE_INTEGER) } });
    assert.equal(last.status, 200);
    assert.deepEqual(last.body.results, []);
    const first = await ctx.call('GET', url);
    assert.ok(first.body.results.length > 0);
    assert.equal(last.body.total, first.body.total, 'total still counts every match');
  });
  test('display orders stay within what the tables hold (PostgreSQL integer): a file past it is a 400, and what is placed after the last stays in range', async () => {
    const MAX = 2_147_483_647;
    const file = (order: number) => ({
      formatVersion: 1,
      bundles: [
        {
          header: { productId: 'ORDERED', properties: {} },
          options: [
            {
              name: 'Last',
              type: 'ADD_ON',
              displayOrder: order,
              products: [{ productId: 'P1', displayOrder: order }, { productId: 'P2' }],
            },
          ],
        },
      ],
    });
    const past = await ctx.call('POST', '/v1/catalogue/apply', { body: file(MAX + 1) });
    assertProblem(past, 400, 'validation_failed');
    assert.deepEqual(past.body.errors.map((e: { pointer: string }) => e.pointer).sort(), [
      '/bundles/0/options/0/displayOrder',
      '/bundles/0/options/0/products/0/displayOrder',
    ]);
    assert.equal((await ctx.call('POST', '/v1/catalogue/apply', { body: file(MAX) })).status, 200);
    const page = await ctx.call('GET', '/v1/bundles');
    const bundleId = page.body.bundles.find(
      (b: { header: { productId: string } }) => b.header.productId === 'ORDERED',
    ).id;
    const options = async () => (await ctx.call('GET', `/v1/bundles/${bundleId}/options`)).body.options;
    const [last] = await options();
    // Placed after the last: a new option, a clone, and products added to the last option.
    const added = await ctx.call('POST', `/v1/bundles/${bundleId}/options`, {
      body: { name: 'After', type: 'ADD_ON' },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const cloned = await ctx.call('POST', `/v1/bundles/${bundleId}/options/${last.id}/clone`);
    assert.equal(cloned.status, 201, JSON.stringify(cloned.body));
    const products = await ctx.call('POST', `/v1/bundles/${bundleId}/options/${last.id}/products`, {
      body: [{ productId: 'P3' }, { productId: 'P4' }],
    });
    assert.equal(products.status, 201, JSON.stringify(products.body));
    const listed = await options();
    assert.deepEqual(
      listed.map((o: { name: string; displayOrder: number }) => [o.name, o.displayOrder]),
      [
        ['Last', MAX],
        ['After', MAX],
        ['Last (copy)', MAX],
      ],
    );
    const option = await ctx.call('GET', `/v1/bundles/${bundleId}/options/${last.id}`);
    assert.deepEqual(
      option.body.products.map((p: { productId: string; displayOrder: number }) => [
        p.productId,
        p.displayOrder,
      ]),
      [
        ['P1', MAX],
        ['P2', MAX],
        ['P3', MAX],
        ['P4', MAX],
      ],
    );
  });
});
