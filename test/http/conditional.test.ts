import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, type CallOptions, type CallResult, describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';
import { storedEntries } from '../price-books/support.ts';

const strongTag = /^"[^"]+"$/;

function etagOf(result: CallResult): string {
  const tag = result.headers.etag;
  assert.equal(typeof tag, 'string', `${result.status} ${result.text.slice(0, 200)} has an ETag`);
  assert.match(tag as string, strongTag);
  return tag as string;
}

describeEachDatabase('ETag, If-Match and If-None-Match', (ctx) => {
  async function ok(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, options?: CallOptions) {
    const result = await ctx.call(method, url, options);
    assert.ok(
      result.status >= 200 && result.status < 300,
      `${method} ${url}: ${result.status} ${result.text}`,
    );
    return result;
  }

  /** A bundle of two options, the first priced in USD, with a variant table on its first product. */
  async function world() {
    const { bundle, options } = await createBundle(ctx);
    const [base, extras] = options;
    const bundleUrl = `/v1/bundles/${bundle.id}`;
    const optionUrl = `${bundleUrl}/options/${base.id}`;
    const bookUrl = `/v1/pricebooks/${base.priceBookId}`;
    await ok('PUT', `${bookUrl}/prices`, {
      body: [
        {
          productId: 'BASE-S',
          currency: 'USD',
          standardPrice: 10,
          adjustment: { type: 'percent', amount: 5 },
        },
        { productId: 'BASE-L', currency: 'USD', standardPrice: 20 },
      ],
    });
    await ok('PUT', `${bookUrl}/products/BASE-S/product-variants`, {
      body: { isDynamic: true, template: '{size}', properties: [{ name: 'size', values: ['S', 'M'] }] },
    });
    return { bundle, base, extras, bundleUrl, optionUrl, bookUrl };
  }

  const tagOf = async (url: string) => etagOf(await ok('GET', url));

  test('every single-resource read and write answers with a strong ETag, the same a read then gives', async () => {
    const { bundle, base, bundleUrl, optionUrl, bookUrl } = await world();
    const adjustmentUrl = `${bookUrl}/products/BASE-S/adjustment?currency=USD`;
    const variantsUrl = `${bookUrl}/products/BASE-S/product-variants`;
    const reads = [bundleUrl, optionUrl, bookUrl, adjustmentUrl, variantsUrl];
    for (const url of reads) assert.equal(await tagOf(url), await tagOf(url), `${url} is stable`);

    const writes: [string, string, CallOptions | undefined, string][] = [
      ['PATCH', bundleUrl, { body: { isActive: false } }, bundleUrl],
      ['PUT', optionUrl, { body: { name: 'Base 2' } }, optionUrl],
      ['POST', `${optionUrl}/products`, { body: [{ productId: 'BASE-XL' }] }, optionUrl],
      ['PUT', `${optionUrl}/products/BASE-XL`, { body: { displayOrder: 7 } }, optionUrl],
      ['DELETE', `${optionUrl}/BASE-XL`, undefined, optionUrl],
      ['PATCH', bookUrl, { body: { name: 'Book 2' } }, bookUrl],
      [
        'PUT',
        `${bookUrl}/prices`,
        { body: [{ productId: 'BASE-L', currency: 'EUR', listPrice: 3 }] },
        bookUrl,
      ],
      ['DELETE', `${bookUrl}/prices`, { body: ['BASE-L'] }, bookUrl],
      ['PUT', adjustmentUrl, { body: { adjustment: { type: 'override', amount: 4 } } }, adjustmentUrl],
      ['DELETE', adjustmentUrl, undefined, bookUrl],
      [
        'PUT',
        variantsUrl,
        { body: { isDynamic: true, template: '{size}', properties: [{ name: 'size', values: ['S'] }] } },
        variantsUrl,
      ],
    ];
    for (const [method, url, options, readUrl] of writes) {
      const written = etagOf(await ok(method as 'PUT', url, options));
      assert.equal(await tagOf(readUrl), written, `${method} ${url} answers the tag ${readUrl} then has`);
    }

    const created: [
      string,
      CallOptions | undefined,
      (body: { id?: string; option?: { id: string } }) => string,
    ][] = [
      ['/v1/bundles', { body: { header: { productId: 'H', properties: {} } } }, (b) => `/v1/bundles/${b.id}`],
      [`${bundleUrl}/clone`, undefined, (b) => `/v1/bundles/${b.id}`],
      [`${bundleUrl}/options`, { body: { name: 'New' } }, (b) => `${bundleUrl}/options/${b.id}`],
      [`${optionUrl}/clone`, undefined, (b) => `${bundleUrl}/options/${b.option?.id}`],
      ['/v1/pricebooks', { body: { bundleOptionId: base.id } }, (b) => `/v1/pricebooks/${b.id}`],
    ];
    for (const [url, options, location] of created) {
      const made = await ok('POST', url, options);
      assert.equal(made.status, 201);
      assert.equal(
        etagOf(made),
        await tagOf(location(made.body)),
        `POST ${url} answers the new resource's tag`,
      );
    }
    assert.ok(bundle.id);
  });

  test('a tag changes exactly when its representation does', async () => {
    const { bundleUrl, optionUrl, bookUrl, extras } = await world();
    const extrasUrl = `${bundleUrl}/options/${extras.id}`;
    const tags = async () => ({
      bundle: await tagOf(bundleUrl),
      option: await tagOf(optionUrl),
      extras: await tagOf(extrasUrl),
      book: await tagOf(bookUrl),
    });
    /** Which of the tags a write changed. */
    const changedBy = async (
      method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      options?: CallOptions,
    ) => {
      const before = await tags();
      await ok(method, url, options);
      const after = await tags();
      return (Object.keys(before) as (keyof typeof before)[]).filter((k) => before[k] !== after[k]).sort();
    };

    assert.deepEqual(await changedBy('PATCH', bundleUrl, { body: { isActive: false } }), ['bundle']);
    const made = await ctx.call('POST', `${bundleUrl}/options`, { body: { name: 'Third' } });
    const thirdUrl = `${bundleUrl}/options/${made.body.id}`;
    assert.notEqual((await tags()).bundle, made.headers.etag, 'an option made changes the bundle counts');
    assert.deepEqual(await changedBy('PUT', thirdUrl, { body: { name: 'Renamed' } }), [], 'counts unchanged');
    assert.deepEqual(await changedBy('PUT', thirdUrl, { body: { type: 'INCLUDED' } }), ['bundle'], 'type');
    assert.deepEqual(await changedBy('PUT', thirdUrl, { body: { type: 'INCLUDED' } }), [], 'same type');
    assert.deepEqual(await changedBy('DELETE', thirdUrl), ['bundle'], 'an option deleted');

    assert.deepEqual(await changedBy('PUT', extrasUrl, { body: { description: 'x' } }), ['extras']);
    assert.deepEqual(await changedBy('POST', `${optionUrl}/products`, { body: [{ productId: 'NEW' }] }), [
      'option',
    ]);
    assert.deepEqual(
      await changedBy('PUT', `${optionUrl}/products/NEW`, { body: { properties: { a: 'b' } } }),
      ['option'],
    );
    assert.deepEqual(await changedBy('DELETE', `${optionUrl}/NEW`), ['option']);

    assert.deepEqual(
      await changedBy('PUT', `${bookUrl}/prices`, {
        body: [{ productId: 'BASE-S', currency: 'EUR', standardPrice: 1 }],
      }),
      ['book'],
    );
    assert.deepEqual(await changedBy('DELETE', `${bookUrl}/prices`, { body: ['BASE-L'] }), ['book']);
    assert.deepEqual(await changedBy('PATCH', bookUrl, { body: { description: 'd' } }), ['book']);
    assert.deepEqual(await changedBy('DELETE', bookUrl), ['book'], 'soft delete');
    // A new current book changes the option's priceBookId.
    assert.deepEqual(await changedBy('POST', '/v1/pricebooks', { body: { bundleOptionId: extras.id } }), [
      'extras',
    ]);
  });

  test('a stale If-Match is 412 and changes nothing; the current tag, a list holding it, and * succeed', async () => {
    const { bundleUrl, optionUrl, bookUrl } = await world();
    const stale = await tagOf(bundleUrl);
    await ok('PATCH', bundleUrl, { body: { isActive: false } });
    const current = await tagOf(bundleUrl);
    const before = (await ok('GET', bundleUrl)).body;
    for (const ifMatch of [stale, `W/${current}`, '"nonsense"', `${stale}, W/${current}`]) {
      const refused = await ctx.call('PATCH', bundleUrl, {
        body: { isActive: true },
        headers: { 'if-match': ifMatch },
      });
      assertProblem(refused, 412, 'precondition_failed');
      assert.equal(refused.headers.etag, undefined);
    }
    assertProblem(await ctx.call('DELETE', bundleUrl, { headers: { 'if-match': stale } }), 412);
    assert.deepEqual((await ok('GET', bundleUrl)).body, before, 'nothing changed');
    assert.equal(await tagOf(bundleUrl), current, 'not even the version');

    const patched = await ok('PATCH', bundleUrl, {
      body: { isActive: true },
      headers: { 'if-match': `${stale}, ${current}` },
    });
    assert.notEqual(etagOf(patched), current);
    await ok('PATCH', bundleUrl, { body: { isActive: false }, headers: { 'if-match': '*' } });

    // Options, option products and price books: a stale tag refuses, a fresh one is taken.
    const cases: [string, string, CallOptions, string][] = [
      ['PUT', optionUrl, { body: { name: 'N' } }, optionUrl],
      ['PUT', `${optionUrl}/products/BASE-S`, { body: { displayOrder: 4 } }, optionUrl],
      ['DELETE', `${optionUrl}/BASE-L`, {}, optionUrl],
      ['PATCH', bookUrl, { body: { name: 'B' } }, bookUrl],
      [
        'PUT',
        `${bookUrl}/prices`,
        { body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: 99 }] },
        bookUrl,
      ],
      ['DELETE', `${bookUrl}/products/BASE-S/adjustment?currency=USD`, {}, bookUrl],
    ];
    for (const [i, [method, url, options, root]] of cases.entries()) {
      const old = await tagOf(root);
      await ok('PATCH', bookUrl, { body: { description: `moved on ${i}` } });
      await ok('PUT', optionUrl, { body: { description: `moved on ${i}` } });
      const option = (await ok('GET', optionUrl)).body;
      const entries = await storedEntries(ctx, (await ok('GET', bookUrl)).body.id);
      const refused = await ctx.call(method as 'PUT', url, { ...options, headers: { 'if-match': old } });
      assertProblem(refused, 412, 'precondition_failed');
      assert.deepEqual((await ok('GET', optionUrl)).body, option, `${method} ${url} left the option`);
      assert.deepEqual(await storedEntries(ctx, (await ok('GET', bookUrl)).body.id), entries);
      await ok(method as 'PUT', url, { ...options, headers: { 'if-match': await tagOf(root) } });
    }
  });

  test('If-Match on a record that does not exist is 404; a malformed If-Match is 400', async () => {
    const { bundleUrl, optionUrl } = await world();
    const tag = await tagOf(bundleUrl);
    assertProblem(
      await ctx.call('PATCH', '/v1/bundles/bnd_01M7Z4FGHN62EHBXHK2BWGA38Q', {
        body: { isActive: true },
        headers: { 'if-match': tag },
      }),
      404,
      'not_found',
    );
    assertProblem(
      await ctx.call('DELETE', `${bundleUrl}/options/opt_01M7Z4FGHN62EHBXHK2BWGA38Q`, {
        headers: { 'if-match': '*' },
      }),
      404,
    );
    const otherKey = await ctx.newKey('someone-else');
    assertProblem(await ctx.call('DELETE', optionUrl, { key: otherKey, headers: { 'if-match': '*' } }), 404);
    for (const malformed of ['unquoted', '"a" "b"', '*, "a"']) {
      const refused = await ctx.call('PATCH', bundleUrl, { body: {}, headers: { 'if-match': malformed } });
      assertProblem(refused, 400, 'validation_failed');
      assert.equal(refused.body.errors[0].in, 'header');
      assert.equal(refused.body.errors[0].pointer, '/if-match');
    }
    assert.equal(await tagOf(bundleUrl), tag);
  });

  test('every conditional write: a well-formed If-Match no version can have is 412, a malformed one 400', async () => {
    const { bundle, base, extras, bundleUrl, optionUrl, bookUrl } = await world();
    const ruleBody = {
      name: 'r',
      kind: 'requires',
      when: { optionId: base.id, productId: 'BASE-L' },
      then: [{ optionId: extras.id, productId: 'EXTRA-WARRANTY' }],
    };
    const rule = await ok('POST', `${bundleUrl}/rules`, { body: ruleBody });
    const hook = await ok('POST', '/v1/webhook-endpoints', {
      body: { url: 'https://hooks.example.com/cpq', eventTypes: ['bundle.created'] },
    });
    const policyBody = { name: 'p', when: { lineDiscountPercentAbove: 10 } };
    const policy = await ok('POST', '/v1/approval-policies', { body: policyBody });
    const quoteBody = {
      currency: 'USD',
      bundles: [
        {
          bundleId: bundle.id,
          options: [{ optionId: base.id, products: [{ productId: 'BASE-S', quantity: 1 }] }],
        },
      ],
    };
    const quote = await ok('POST', '/v1/quotes', { body: quoteBody });
    const quoteUrl = `/v1/quotes/${quote.body.id}`;
    const ruleUrl = `${bundleUrl}/rules/${rule.body.id}`;
    const hookUrl = `/v1/webhook-endpoints/${hook.body.id}`;
    const policyUrl = `/v1/approval-policies/${policy.body.id}`;
    const adjustmentUrl = `${bookUrl}/products/BASE-S/adjustment?currency=USD`;
    const variantsUrl = `${bookUrl}/products/BASE-S/product-variants`;
    // [method, url, body, the id its ETag names]
    const writes: [string, string, unknown, string][] = [
      ['PATCH', bundleUrl, { isActive: false }, bundle.id],
      ['DELETE', bundleUrl, undefined, bundle.id],
      ['PUT', optionUrl, { name: 'N' }, base.id],
      ['DELETE', optionUrl, undefined, base.id],
      ['PUT', `${optionUrl}/products/BASE-S`, { displayOrder: 4 }, base.id],
      ['DELETE', `${optionUrl}/BASE-L`, undefined, base.id],
      ['PATCH', bookUrl, { name: 'B' }, base.priceBookId],
      ['DELETE', bookUrl, undefined, base.priceBookId],
      [
        'PUT',
        `${bookUrl}/prices`,
        [{ productId: 'BASE-S', currency: 'USD', standardPrice: 9 }],
        base.priceBookId,
      ],
      ['DELETE', `${bookUrl}/prices`, ['BASE-L'], base.priceBookId],
      ['PUT', adjustmentUrl, { adjustment: { type: 'override', amount: 4 } }, base.priceBookId],
      ['DELETE', adjustmentUrl, undefined, base.priceBookId],
      [
        'PUT',
        variantsUrl,
        { isDynamic: true, template: '{size}', properties: [{ name: 'size', values: ['S'] }] },
        base.priceBookId,
      ],
      ['PUT', ruleUrl, ruleBody, rule.body.id],
      ['DELETE', ruleUrl, undefined, rule.body.id],
      ['PATCH', hookUrl, { description: 'd' }, hook.body.id],
      ['DELETE', hookUrl, undefined, hook.body.id],
      ['PUT', policyUrl, policyBody, policy.body.id],
      ['DELETE', policyUrl, undefined, policy.body.id],
      ['PUT', quoteUrl, quoteBody, quote.body.id],
      ['PATCH', quoteUrl, { title: 't' }, quote.body.id],
      ['DELETE', quoteUrl, undefined, quote.body.id],
    ];
    const document = (await ctx.call('GET', '/openapi.json', { key: null })).body;
    const conditional = Object.entries(document.paths as Record<string, object>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['put', 'patch', 'delete'].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.equal(
      writes.length,
      conditional.length,
      `every conditional write is tried: ${conditional.join(', ')}`,
    );
    for (const [method, url, body, id] of writes) {
      for (const version of ['999999999999999', '2147483648', '0', '01', '-1', '1.5', 'x', '']) {
        const refused = await ctx.call(method as 'PUT', url, {
          body,
          headers: { 'if-match': `"${id}:${version}"` },
        });
        assertProblem(refused, 412, 'precondition_failed');
      }
      for (const malformed of [`${id}:999999999999999`, `"${id}:999999999999999`]) {
        const refused = await ctx.call(method as 'PUT', url, { body, headers: { 'if-match': malformed } });
        assertProblem(refused, 400, 'validation_failed');
      }
    }
  });

  test('20 concurrent writes with the same If-Match: exactly one wins, the others are 412', async () => {
    const { bundleUrl, optionUrl } = await world();
    for (const [method, url, body] of [
      ['PATCH', bundleUrl, (i: number) => ({ clonedBundleTempName: `writer ${i}` })],
      ['PUT', optionUrl, (i: number) => ({ name: `writer ${i}` })],
    ] as const) {
      const tag = await tagOf(url);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          ctx.call(method, url, { body: body(i), headers: { 'if-match': tag } }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      assert.deepEqual(
        statuses.filter((s) => s !== 412),
        [200],
        `${method}: ${statuses.join(' ')}`,
      );
      for (const refused of answers.filter((a) => a.status === 412))
        assertProblem(refused, 412, 'precondition_failed');
      const winner = answers.find((a) => a.status === 200) as CallResult;
      const now = await ok('GET', url);
      assert.equal(etagOf(now), winner.headers.etag, 'the winner wrote last');
      const written = method === 'PATCH' ? now.body.clonedBundleTempName : now.body.name;
      assert.equal(written, method === 'PATCH' ? winner.body.clonedBundleTempName : winner.body.name);
    }
  });

  test('concurrent writes without If-Match all land, each on its own version', async () => {
    const { optionUrl } = await world();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ctx.call('PUT', optionUrl, { body: { description: `d${i}` } })),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
    );
    assert.equal(new Set(answers.map((a) => a.headers.etag)).size, 10);
  });

  test('writes racing inside one bundle take turns: no deadlock, no 5xx, a product added once', async () => {
    const { bundleUrl, optionUrl, bookUrl, extras } = await world();
    const adds = await Promise.all(
      Array.from({ length: 8 }, () =>
        ctx.call('POST', `${optionUrl}/products`, { body: [{ productId: 'RACED' }] }),
      ),
    );
    assert.deepEqual(adds.map((a) => a.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);

    // Every kind of write at once, the bundle's deletion among them: whatever the order, each answers normally.
    const extrasUrl = `${bundleUrl}/options/${extras.id}`;
    const writes = [
      ...Array.from({ length: 4 }, (_, i) =>
        ctx.call('PUT', `${bookUrl}/prices`, {
          body: [{ productId: 'RACED', currency: 'USD', standardPrice: i + 1 }],
        }),
      ),
      ctx.call('DELETE', `${optionUrl}/RACED`),
      ctx.call('PUT', `${optionUrl}/products/BASE-S`, { body: { displayOrder: 3 } }),
      ctx.call('PUT', extrasUrl, { body: { type: 'INCLUDED' } }),
      ctx.call('POST', '/v1/pricebooks', { body: { bundleOptionId: extras.id } }),
      ctx.call('DELETE', extrasUrl),
      ctx.call('PATCH', bundleUrl, { body: { isActive: false } }),
      ctx.call('DELETE', bundleUrl),
      ctx.call('POST', `${bundleUrl}/options`, { body: { name: 'Late' } }),
    ];
    for (const answer of await Promise.all(writes)) {
      assert.ok(answer.status < 500, `${answer.status} ${answer.text}`);
    }
    assertProblem(await ctx.call('GET', bundleUrl), 404);
  });

  test('GET with a matching If-None-Match is 304 without a body; otherwise 200', async () => {
    const { bundle, bundleUrl, optionUrl, bookUrl } = await world();
    const urls = [
      bundleUrl,
      optionUrl,
      bookUrl,
      `${bookUrl}/products/BASE-S/adjustment?currency=USD`,
      `${bookUrl}/products/BASE-S/product-variants`,
      `${bookUrl}/pricedProducts`,
      '/v1/bundles?limit=5',
      `/v1/bundles-details?bundleIds=${bundle.id}`,
      `/v1/bundles-details?bundleIds=${bundle.id}&at=2030-01-01T00:00:00Z`,
    ];
    for (const url of urls) {
      const full = await ok('GET', url);
      const tag = etagOf(full);
      for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
        const cached = await ctx.call('GET', url, { headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(cached.status, 304, `${url} ${ifNoneMatch}`);
        assert.equal(cached.text, '');
        assert.equal(cached.headers.etag, tag);
        assert.equal(cached.headers['content-type'], undefined);
      }
      const fresh = await ctx.call('GET', url, { headers: { 'if-none-match': '"other"' } });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.text, full.text);
    }
    const stale = await tagOf(bookUrl);
    await ok('PATCH', bookUrl, { body: { name: 'changed' } });
    const after = await ctx.call('GET', bookUrl, { headers: { 'if-none-match': stale } });
    assert.equal(after.status, 200);
    assert.equal(after.body.name, 'changed');
    // Errors carry no tag and are never a 304.
    const missing = await ctx.call('GET', '/v1/bundles/bnd_01M7Z4FGHN62EHBXHK2BWGA38Q', {
      headers: { 'if-none-match': '*' },
    });
    assertProblem(missing, 404);
    assert.equal(missing.headers.etag, undefined);
  });

  test('the OpenAPI document declares If-Match, If-None-Match, 412 and 304', async () => {
    const document = (await ctx.call('GET', '/openapi.json', { key: null })).body;
    const header = (operation: { parameters: { in: string; name: string }[] }, name: string) =>
      operation.parameters.some((p) => p.in === 'header' && p.name === name);
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, never>>)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, operation] of Object.entries(item) as [string, never][]) {
        const where = `${method} ${path}`;
        if (method === 'get') {
          assert.ok(header(operation, 'if-none-match'), where);
          assert.ok((operation as { responses: object }).responses['304' as never], where);
        }
        if (['put', 'patch', 'delete'].includes(method)) {
          assert.ok(header(operation, 'if-match'), where);
          assert.ok((operation as { responses: object }).responses['412' as never], where);
        }
      }
    }
  });
});
