import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';
import { createBundle, expectStatus } from '../helpers/factories.ts';
import { storedEntries } from './support.ts';

const csvHeaders = { 'content-type': 'text/csv' };

describeEachDatabase('bulk price changes and CSV', (ctx) => {
  async function pricedBook() {
    const { options } = await createBundle(ctx, {
      options: [
        {
          name: 'Base',
          type: 'INCLUDED',
          products: [
            { productId: 'BASE-S', properties: { name: 'Small base, "quoted"' } },
            { productId: 'BASE-L', properties: { size: 'L' } },
            { productId: 'BASE-M' },
          ],
        },
      ],
    });
    const option = options[0];
    const url = `/v1/pricebooks/${option.priceBookId}`;
    expectStatus(
      await ctx.call('PUT', `${url}/prices`, {
        body: [
          {
            productId: 'BASE-S',
            currency: 'USD',
            standardPrice: 19.99,
            listPrice: 25,
            allowUnitPriceEditing: true,
          },
          { productId: 'BASE-S', currency: 'JPY', standardPrice: 1999 },
          {
            productId: 'BASE-L',
            currency: 'USD',
            standardPrice: 0.0125,
            adjustment: {
              type: 'volume',
              tiers: [
                { firstUnit: 1, lastUnit: 9, unitPrice: 10 },
                { firstUnit: 10, lastUnit: null, unitPrice: 8.5 },
              ],
            },
          },
          {
            productId: 'BASE-L',
            currency: 'EUR',
            listPrice: 100,
            adjustment: { type: 'percent', amount: 10 },
          },
        ],
      }),
      200,
      'seed prices',
    );
    return { option, url };
  }

  test('bulk change rounds to the currency, keeps finer prices, changes adjustment money and nothing else', async () => {
    const { url } = await pricedBook();
    const res = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { percent: 3, fields: ['standardPrice', 'adjustments'] },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.dryRun, false);
    assert.deepEqual(res.body.summary, { rows: 4, changed: 3, unchanged: 1 });
    const after = Object.fromEntries(
      res.body.changes.map((c: { productId: string; currency: string; after: unknown }) => [
        `${c.productId} ${c.currency}`,
        c.after,
      ]),
    );
    // 19.99 x 1.03 = 20.5897 -> cents; 1999 JPY x 1.03 = 2058.97 -> yen; 0.0125 x 1.03 = 0.012875 -> its 4 places.
    assert.equal(after['BASE-S USD'].standardPrice, 20.59);
    assert.equal(after['BASE-S USD'].listPrice, 25, 'listPrice is not among the fields');
    assert.equal(after['BASE-S JPY'].standardPrice, 2059);
    assert.equal(after['BASE-L USD'].standardPrice, 0.0129);
    assert.deepEqual(
      after['BASE-L USD'].adjustment.tiers.map((t: { unitPrice: number }) => t.unitPrice),
      [10.3, 8.76],
    );
    assert.equal(
      after['BASE-L EUR'],
      undefined,
      'a percent adjustment holds no money; no standardPrice to change',
    );
    const stored = await storedEntries(ctx, url.split('/').at(-1) as string);
    assert.equal(
      stored.prices.find((p) => p.product_id === 'BASE-S' && p.currency === 'USD')?.standard_price,
      '20.59',
    );
    const events = await ctx.call('GET', '/v1/events', { query: { types: 'prices.changed' } });
    const last = events.body.events.at(-1);
    assert.deepEqual(last.data.object.productIds.toSorted(), ['BASE-L', 'BASE-S']);
  });

  test('a dry run writes nothing, and its ETag applies exactly the preview or gets 412', async () => {
    const { option, url } = await pricedBook();
    const before = await storedEntries(ctx, option.priceBookId);
    const events = async () =>
      Number(
        (
          await ctx.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const eventsBefore = await events();
    const body = { percent: -10, currencies: ['USD'], fields: ['standardPrice', 'listPrice'], dryRun: true };
    const preview = await ctx.call('POST', `${url}/prices/bulk-change`, { body });
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.dryRun, true);
    assert.deepEqual(
      preview.body.changes.map(
        (c: { productId: string; currency: string }) => `${c.productId} ${c.currency}`,
      ),
      ['BASE-S USD', 'BASE-L USD'],
    );
    assert.deepEqual(preview.body.changes[0].before, {
      standardPrice: 19.99,
      listPrice: 25,
      adjustment: null,
      allowUnitPriceEditing: true,
    });
    assert.deepEqual(preview.body.changes[0].after.standardPrice, 17.99);
    assert.deepEqual(await storedEntries(ctx, option.priceBookId), before, 'a preview writes nothing');
    assert.equal(await events(), eventsBefore, 'and records no event');
    const book = await ctx.call('GET', url);
    assert.equal(preview.headers.etag, book.headers.etag, 'the preview answers the current ETag');

    const applied = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { ...body, dryRun: false },
      headers: { 'if-match': String(preview.headers.etag) },
    });
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.body.changes, preview.body.changes);
    const stale = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { ...body, dryRun: false },
      headers: { 'if-match': String(preview.headers.etag) },
    });
    assertProblem(stale, 412, 'precondition_failed');
  });

  test('bulk change refuses bad input with pointers: fields, decimals, the price limit, a deleted book', async () => {
    const { url } = await pricedBook();
    const bad = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { percent: 5, fields: ['unitPrice'] },
    });
    assertProblem(bad, 400, 'validation_failed');
    const decimals = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { percent: 1.0000001, fields: ['listPrice'] },
    });
    assertProblem(decimals, 400, 'validation_failed');
    assert.equal(decimals.body.errors[0].pointer, '/percent');
    expectStatus(
      await ctx.call('PUT', `${url}/prices`, {
        body: [{ productId: 'BASE-M', currency: 'USD', listPrice: 999999999999999 }],
      }),
      200,
      'huge price',
    );
    const limit = await ctx.call('POST', `${url}/prices/bulk-change`, {
      body: { percent: 1, fields: ['listPrice'] },
    });
    assertProblem(limit, 422, 'rule_violation');
    assert.equal(limit.body.errors[0].code, 'price_limit');
    expectStatus(await ctx.call('DELETE', url), 204, 'delete book');
    assertProblem(
      await ctx.call('POST', `${url}/prices/bulk-change`, { body: { percent: 1, fields: ['listPrice'] } }),
      409,
      'conflict',
    );
  });

  test('bulk change is idempotent under Idempotency-Key and closed to read-only keys', async () => {
    const { url } = await pricedBook();
    const headers = { 'idempotency-key': 'raise-once' };
    const body = { percent: 10, fields: ['standardPrice'] };
    const first = await ctx.call('POST', `${url}/prices/bulk-change`, { body, headers });
    const again = await ctx.call('POST', `${url}/prices/bulk-change`, { body, headers });
    assert.equal(again.status, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);
    const prices = await ctx.call('GET', `${url}/prices`);
    assert.equal(prices.body.entries[0].prices.USD.standardPrice, 21.99, 'applied once: 19.99 x 1.1');
    const readOnly = await ctx.newKey('acme', { readOnly: true });
    assertProblem(
      await ctx.call('POST', `${url}/prices/bulk-change`, { key: readOnly, body }),
      403,
      'forbidden',
    );
  });

  test('CSV export round-trips through import with no change', async () => {
    const { url } = await pricedBook();
    const exported = await ctx.call('GET', `${url}/prices`, { headers: { accept: 'text/csv' } });
    assert.equal(exported.status, 200);
    assert.match(String(exported.headers['content-type']), /^text\/csv/);
    assert.match(String(exported.headers['content-disposition']), /attachment; filename="prices-pb_.+\.csv"/);
    const lines = exported.text.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'productId,name,currency,standardPrice,listPrice,allowUnitPriceEditing,adjustment',
    );
    assert.equal(lines[1], 'BASE-S,"Small base, ""quoted""",JPY,1999,,true,');
    assert.equal(lines[2], 'BASE-S,"Small base, ""quoted""",USD,19.99,25,true,');
    assert.equal(lines[3], 'BASE-L,,EUR,,100,false,"{""type"":""percent"",""amount"":10}"');
    assert.equal(lines.length, 5);
    const json = await ctx.call('GET', `${url}/prices`);
    assert.deepEqual(
      json.body.entries.map((e: { productId: string }) => e.productId),
      ['BASE-S', 'BASE-L'],
    );
    const imported = await ctx.call('PUT', `${url}/prices`, { body: exported.text, headers: csvHeaders });
    assert.equal(imported.status, 200, imported.text);
    assert.deepEqual(imported.body.summary, { rows: 4, changed: 0, unchanged: 4 });
    assert.deepEqual(imported.body.changes, []);
    const cached = await ctx.call('GET', `${url}/prices`, {
      headers: { accept: 'text/csv', 'if-none-match': String(exported.headers.etag) },
    });
    assert.equal(cached.status, 200, 'the import moved the book on, so its export has a new ETag');
  });

  test('CSV export starts with a quote each cell a spreadsheet would run as a formula; import reads it back', async () => {
    // OWASP's list: = + - @ tab and carriage return; and texts that already begin with quotes before one of them.
    const products = [
      { productId: '=SUM(A1:A9)', name: '=HYPERLINK("http://example.com","Click")' },
      { productId: '+PLUS', name: '+1 year' },
      { productId: '-MINUS', name: '-10% promo' },
      { productId: '@AT', name: '@cmd' },
      { productId: '\tTAB', name: '\r=CR' },
      { productId: "'=QUOTED", name: "''+twice" },
      { productId: "'PLAIN", name: 'Plain, with a comma' },
    ];
    const { options } = await createBundle(ctx, {
      options: [
        {
          name: 'Risky',
          type: 'ADD_ON',
          products: products.map(({ productId, name }) => ({ productId, properties: { name } })),
        },
      ],
    });
    const url = `/v1/pricebooks/${options[0].priceBookId}`;
    expectStatus(
      await ctx.call('PUT', `${url}/prices`, {
        body: products.map(({ productId }) => ({ productId, currency: 'USD', standardPrice: 10 })),
      }),
      200,
      'seed prices',
    );
    const exported = await ctx.call('GET', `${url}/prices`, { headers: { accept: 'text/csv' } });
    assert.equal(exported.status, 200, exported.text);
    assert.deepEqual(exported.text.split('\r\n').slice(1, -1), [
      `'=SUM(A1:A9),"'=HYPERLINK(""http://example.com"",""Click"")",USD,10,,false,`,
      "'+PLUS,'+1 year,USD,10,,false,",
      "'-MINUS,'-10% promo,USD,10,,false,",
      "'@AT,'@cmd,USD,10,,false,",
      `'\tTAB,"'\r=CR",USD,10,,false,`,
      `''=QUOTED,'''+twice,USD,10,,false,`,
      `'PLAIN,"Plain, with a comma",USD,10,,false,`,
    ]);
    // No cell of the file begins with a formula character, quoted or not.
    const cells = exported.text.split(/,|\r\n/).map((cell) => cell.replace(/^"/, ''));
    assert.deepEqual(
      cells.filter((cell) => /^[=+\-@\t\r]/.test(cell)),
      [],
    );

    // The file as exported changes nothing; with its prices changed, it changes each product by its exact id.
    const same = await ctx.call('PUT', `${url}/prices`, { body: exported.text, headers: csvHeaders });
    assert.equal(same.status, 200, same.text);
    assert.deepEqual(same.body.summary, { rows: products.length, changed: 0, unchanged: products.length });
    const raised = exported.text.replaceAll(',USD,10,', ',USD,12,');
    const changed = await ctx.call('PUT', `${url}/prices`, { body: raised, headers: csvHeaders });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.summary, { rows: products.length, changed: products.length, unchanged: 0 });
    const json = await ctx.call('GET', `${url}/prices`);
    assert.deepEqual(
      json.body.entries
        .map((e: { productId: string; prices: { USD: { standardPrice: number } } }) => [
          e.productId,
          e.prices.USD.standardPrice,
        ])
        .sort(),
      products.map(({ productId }) => [productId, 12]).sort(),
    );
  });

  test('CSV import: a preview, then the import; left-out columns keep, empty cells clear', async () => {
    const { option, url } = await pricedBook();
    const csv = ['productId,currency,standardPrice,listPrice', 'BASE-S,USD,21.5,', 'BASE-M,GBP,7,8', ''].join(
      '\n',
    );
    const before = await storedEntries(ctx, option.priceBookId);
    const preview = await ctx.call('PUT', `${url}/prices`, {
      body: csv,
      headers: csvHeaders,
      query: { dryRun: 'true' },
    });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(await storedEntries(ctx, option.priceBookId), before);
    assert.deepEqual(
      preview.body.changes.map((c: { line: number; action: string }) => [c.line, c.action]),
      [
        [2, 'update'],
        [3, 'create'],
      ],
    );
    assert.deepEqual(preview.body.changes[0].after, {
      standardPrice: 21.5,
      listPrice: null,
      adjustment: null,
      allowUnitPriceEditing: true,
    });
    const applied = await ctx.call('PUT', `${url}/prices`, {
      body: csv,
      headers: { ...csvHeaders, 'if-match': String(preview.headers.etag) },
    });
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.body.dryRun, false);
    assert.deepEqual(applied.body.changes, preview.body.changes);
    const stored = await storedEntries(ctx, option.priceBookId);
    const gbp = stored.prices.find((p) => p.product_id === 'BASE-M');
    assert.deepEqual([gbp?.standard_price, gbp?.list_price], ['7', '8']);
    const jpy = stored.prices.find((p) => p.product_id === 'BASE-S' && p.currency === 'JPY');
    assert.equal(jpy?.standard_price, '1999', 'rows not in the file are left as they are');
  });

  test('CSV import reports every bad row by its line, in one 422, and writes nothing', async () => {
    const { option, url } = await pricedBook();
    const before = await storedEntries(ctx, option.priceBookId);
    const csv = [
      'productId,name,currency,standardPrice,listPrice,allowUnitPriceEditing,adjustment',
      'BASE-S,,USD,20,,true,',
      'BASE-S,,USD,1.2345678,,,',
      'NOPE,,USD,1,,,',
      '"BASE-L","a name over',
      'two lines",EUR,"1,234.50",,maybe,',
      'BASE-M,,usd,1,,,',
      'BASE-M,,EUR,1,,,"{""type"":""volume"",""tiers"":[{""firstUnit"":1,""lastUnit"":5,""unitPrice"":1},{""firstUnit"":7,""unitPrice"":-1}]}"',
      'BASE-M,,EUR',
      'BASE-S,,USD,2,,,',
    ].join('\r\n');
    const res = await ctx.call('PUT', `${url}/prices`, { body: csv, headers: csvHeaders });
    assertProblem(res, 422, 'rule_violation');
    const pointers = new Set(res.body.errors.map((e: { pointer: string }) => e.pointer));
    for (const expected of [
      '/line/3/standardPrice',
      '/line/3',
      '/line/4/productId',
      '/line/5/standardPrice',
      '/line/5/allowUnitPriceEditing',
      '/line/7/currency',
      '/line/8/adjustment/tiers/1/unitPrice',
      '/line/9',
      '/line/10',
    ]) {
      assert.ok(pointers.has(expected), `${expected} in ${[...pointers].join(' ')}`);
    }
    assert.ok(
      [...pointers].every((p) => /^\/line\/(3|4|5|7|8|9|10)(\/|$)/.test(String(p))),
      'good rows (2, 6) have no problem',
    );
    assert.match(
      res.body.errors.find((e: { pointer: string }) => e.pointer === '/line/10').message,
      /already given at \/line\/2/,
    );
    assert.deepEqual(await storedEntries(ctx, option.priceBookId), before);
  });

  test('CSV import refuses what it cannot read: bad quotes, unknown columns, other routes, JSON dry runs', async () => {
    const { url } = await pricedBook();
    const quote = await ctx.call('PUT', `${url}/prices`, {
      body: 'productId,currency\nBASE-S,"USD\n',
      headers: csvHeaders,
    });
    assertProblem(quote, 400, 'validation_failed');
    assert.match(quote.body.errors[0].pointer, /^\/line\/\d+$/);
    const columns = await ctx.call('PUT', `${url}/prices`, {
      body: 'productId,currency,price\nBASE-S,USD,1\n',
      headers: csvHeaders,
    });
    assertProblem(columns, 422, 'rule_violation');
    assert.deepEqual(columns.body.errors[0].pointer, '/line/1/2');
    assertProblem(
      await ctx.call('PATCH', url, { body: 'name\nx\n', headers: csvHeaders }),
      415,
      'unsupported_media_type',
    );
    const jsonDryRun = await ctx.call('PUT', `${url}/prices`, {
      body: [{ productId: 'BASE-S', currency: 'USD', standardPrice: 1 }],
      query: { dryRun: 'true' },
    });
    assertProblem(jsonDryRun, 400, 'validation_failed');
    assert.equal(jsonDryRun.body.errors[0].pointer, '/dryRun');
    const empty = await ctx.call('PUT', `${url}/prices`, {
      body: 'productId,currency\n',
      headers: csvHeaders,
    });
    assert.equal(empty.status, 200, 'a header alone changes nothing');
    assert.deepEqual(empty.body.summary, { rows: 0, changed: 0, unchanged: 0 });
  });
});
