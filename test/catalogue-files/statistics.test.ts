import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { describeEachDatabase } from '../helpers/app.ts';
import { apply, exportText } from './round-trip.ts';

// A large apply into tables whose statistics call them empty takes statistics in its transaction, so that
// PostgreSQL plans the foreign keys' checks for tables of the size they are becoming (src/catalogue-files/
// catalogue-files.repository.ts, refreshSmallStatistics); tables whose statistics already count such an apply's
// rows are left alone.

/** 30 bundles of 2 options x 10 products in 4 currencies: 2,400 price rows, more than one batch of writes. */
function largeFile(prefix: string) {
  return {
    formatVersion: 1,
    bundles: Array.from({ length: 30 }, (_, b) => ({
      header: { productId: `${prefix}-${b}`, properties: {} },
      options: Array.from({ length: 2 }, (_, o) => ({
        name: `Option ${o}`,
        type: 'ADD_ON',
        configuration: { minCount: null, maxCount: null, defaultProductId: null },
        products: Array.from({ length: 10 }, (_, p) => ({
          productId: `${prefix}-${b}-${o}-${p}`,
          properties: {},
          entry: {
            prices: Object.fromEntries(
              ['USD', 'EUR', 'GBP', 'JPY'].map((currency) => [
                currency,
                { standardPrice: p + 1, listPrice: p + 2, adjustment: null },
              ]),
            ),
          },
        })),
      })),
    })),
  };
}

describeEachDatabase('statistics taken by a large catalogue apply', (ctx) => {
  const tables = ['option_products', 'price_book_prices'];
  const counted = async () => {
    const rows = await ctx.db
      .selectFrom(sql<{ relname: string; reltuples: number }>`pg_class`.as('c'))
      .select(['c.relname', 'c.reltuples'])
      .where('c.relname', 'in', tables)
      .orderBy('c.relname')
      .execute();
    const of = (table: string) => Number(rows.find((row) => row.relname === table)?.reltuples);
    return { option_products: of('option_products'), price_book_prices: of('price_book_prices') };
  };

  test('a fresh database gets statistics counting the apply’s own rows; tables that have them are left', async (t) => {
    const first = await ctx.newKey('first');
    if (ctx.dialect !== 'postgres') {
      // SQLite plans each statement as it is prepared: the apply is all there is to see.
      await apply(ctx.call, first, largeFile('A'));
      assert.match(await exportText(ctx.call, first), /"A-29-1-9"/);
      return;
    }
    // Autovacuum would take statistics of its own after the commit, at a moment of its choosing.
    for (const table of tables) {
      await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(ctx.db);
    }
    t.after(async () => {
      for (const table of tables) {
        await sql`alter table ${sql.table(table)} reset (autovacuum_enabled)`.execute(ctx.db);
      }
    });
    const before = await counted();
    assert.ok(before.price_book_prices < 0, 'never measured before the apply');
    assert.ok(before.option_products <= 0, 'empty before the apply');

    await apply(ctx.call, first, largeFile('A'));
    const after = await counted();
    // Taken after the first batch, and counting its rows, which only the apply's transaction could see then.
    assert.ok(after.price_book_prices >= 1000, JSON.stringify(after));
    assert.ok(after.option_products >= 250, JSON.stringify(after));

    await apply(ctx.call, await ctx.newKey('second'), largeFile('B'));
    assert.deepEqual(await counted(), after, 'statistics that count as many rows are not taken again');
  });
});
