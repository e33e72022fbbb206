import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { cpq } from '../helpers/cli.ts';
import { databaseEnv } from '../helpers/database.ts';
import { createBundle, expectStatus } from '../helpers/factories.ts';

describeEachDatabase('cpq prices', (ctx) => {
  const run = (...args: string[]) => cpq(args, databaseEnv(ctx.database));
  const folder = mkdtempSync(join(tmpdir(), 'cpq-prices-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  async function book() {
    const key = await ctx.newKey('cli-prices');
    const { options } = await createBundle(ctx, { key });
    const id = options[0].priceBookId as string;
    expectStatus(
      await ctx.call('PUT', `/v1/pricebooks/${id}/prices`, {
        key,
        body: [
          { productId: 'BASE-S', currency: 'USD', standardPrice: 19.99 },
          { productId: 'BASE-L', currency: 'USD', standardPrice: 30, listPrice: 35 },
        ],
      }),
      200,
      'seed prices',
    );
    return { id, key };
  }

  test('export prints the CSV; import --dry-run prints the changes and writes nothing; import applies', async () => {
    const { id, key } = await book();
    const exported = await run('prices', 'export', '--account', 'cli-prices', id);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(
      exported.stdout,
      'productId,name,currency,standardPrice,listPrice,allowUnitPriceEditing,adjustment\r\n' +
        'BASE-S,,USD,19.99,,false,\r\nBASE-L,,USD,30,35,false,\r\n',
    );
    const file = join(folder, 'edited.csv');
    writeFileSync(file, exported.stdout.replace('19.99', '21'));
    const dry = await run('prices', 'import', '--account', 'cli-prices', id, file, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, '~ BASE-S USD (line 2)\n    standardPrice: 19.99 -> 21\n');
    assert.equal(dry.stderr, 'dry run: 1 to change, 1 unchanged; nothing was written\n');
    const read = () => ctx.call('GET', `/v1/pricebooks/${id}/prices`, { key });
    assert.equal((await read()).body.entries[0].prices.USD.standardPrice, 19.99);
    const applied = await run('prices', 'import', '--account', 'cli-prices', id, file);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal((await read()).body.entries[0].prices.USD.standardPrice, 21);
  });

  test('import lists each bad row by line on stderr and exits 3; a book of another account is not found', async () => {
    const { id } = await book();
    const file = join(folder, 'bad.csv');
    writeFileSync(file, 'productId,currency,standardPrice\nBASE-S,USD,abc\nNOPE,USD,1\n');
    const bad = await run('prices', 'import', '--account', 'cli-prices', id, file);
    assert.equal(bad.code, 3);
    assert.match(bad.stderr, /bad\.csv#\/line\/2\/standardPrice: "abc" is not an amount/);
    assert.match(bad.stderr, /bad\.csv#\/line\/3\/productId: product NOPE is not a product/);
    const other = await run('prices', 'export', '--account', 'someone-else', id);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /does not exist/);
  });

  test('bulk-change --dry-run previews, then applies; bad arguments exit 2', async () => {
    const { id, key } = await book();
    const args = [
      'prices',
      'bulk-change',
      '--account',
      'cli-prices',
      id,
      '--percent',
      '10',
      '--fields',
      'standardPrice',
    ];
    const dry = await run(...args, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(
      dry.stdout,
      '~ BASE-S USD\n    standardPrice: 19.99 -> 21.99\n~ BASE-L USD\n    standardPrice: 30 -> 33\n',
    );
    const applied = await run(...args, '--currencies', 'USD');
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stderr, '2 to change, 0 unchanged\n');
    const prices = await ctx.call('GET', `/v1/pricebooks/${id}/prices`, { key });
    assert.equal(prices.body.entries[1].prices.USD.listPrice, 35, 'listPrice was not among the fields');
    for (const [option, value, message] of [
      ['--fields', 'price', /--fields takes one or more of standardPrice, listPrice, adjustments/],
      ['--percent', '-150', /--percent must be >= -100/],
      ['--currencies', 'usd', /--currencies/],
    ] as const) {
      // A negative number is written --percent=-150: alone, parseArgs would read it as an option.
      const result = await run(...args, `${option}=${value}`);
      assert.equal(result.code, 2, `${option} ${value}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });
});
