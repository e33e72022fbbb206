import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { bundleTreeTables } from '../../src/db/database.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { createBundle, insertPriceRows } from '../helpers/factories.ts';

// Written straight to the tables, not through the API: the triggers must hold whatever path a change takes.
describeEachDatabase('bundles.tree_version triggers', (ctx) => {
  async function versions(bundleId: string) {
    const row = await ctx.db
      .selectFrom('bundles')
      .select(['version', 'tree_version'])
      .where('id', '=', bundleId)
      .executeTakeFirstOrThrow();
    return { version: Number(row.version), tree: Number(row.tree_version) };
  }

  /** Runs a write and says how the bundle's two versions moved. */
  async function moves(bundleId: string, write: () => Promise<unknown>) {
    const before = await versions(bundleId);
    await write();
    const after = await versions(bundleId);
    return { version: after.version - before.version, tree: after.tree - before.tree };
  }

  test('exist for every table a bundle is made of, for insert, update and delete', async () => {
    const names =
      ctx.dialect === 'postgres'
        ? (
            await sql<{ table: string; name: string; events: string }>`
              select c.relname as table, t.tgname as name,
                concat_ws(',', case when t.tgtype & 4 <> 0 then 'insert' end,
                  case when t.tgtype & 16 <> 0 then 'update' end,
                  case when t.tgtype & 8 <> 0 then 'delete' end) as events
              from pg_trigger t join pg_class c on c.oid = t.tgrelid
              where not t.tgisinternal and t.tgfoid in ('cpq_bump_tree_version'::regproc, 'cpq_bump_tree_version_rules'::regproc)`.execute(
              ctx.db,
            )
          ).rows.flatMap((r) => r.events.split(',').map((e) => `${r.table} ${e}`))
        : (
            await sql<{ table: string; sql: string }>`
              select tbl_name as "table", sql from sqlite_master
              where type = 'trigger' and name glob '*_tree_*'`.execute(ctx.db)
          ).rows.map(
            (r) => `${r.table} ${/after (insert|update|delete) on/i.exec(r.sql)?.[1]?.toLowerCase()}`,
          );
    const expected = [
      'bundles update',
      ...bundleTreeTables.flatMap((t) => ['insert', 'update', 'delete'].map((e) => `${t} ${e}`)),
    ];
    assert.deepEqual(names.sort(), expected.sort());
  });

  test('every insert, update and delete of each table moves tree_version; option counts move version', async () => {
    const { bundle, options } = await createBundle(ctx);
    const [base] = options;
    const at = { account_id: 'acme' };
    const id = bundle.id as string;
    const tree = { version: 0, tree: 1 };
    const counts = { version: 1, tree: 1 };

    assert.deepEqual(
      await moves(id, () =>
        ctx.db.updateTable('bundles').set({ is_active: false }).where('id', '=', id).execute(),
      ),
      tree,
      'the bundle itself',
    );
    // Two entries, four prices and a variant table in five statements: SQLite moves it per row, PostgreSQL per
    // statement.
    assert.deepEqual(
      await moves(id, () => insertPriceRows(ctx, base)),
      { version: 0, tree: ctx.dialect === 'sqlite' ? 7 : 5 },
      'entries',
    );

    const option = { ...at, bundle_id: id, created_at: 'x', updated_at: 'x', version: 1 };
    const made = {
      ...option,
      id: 'opt_TRIGGER',
      type: 'ADD_ON' as const,
      name: 'N',
      description: null,
      display_order: 9,
      min_count: null,
      max_count: null,
      default_option_product_id: null,
      price_book_id: null,
    };
    const ofOption = ctx.db.updateTable('bundle_options').where('id', '=', made.id);
    assert.deepEqual(
      await moves(id, () => ctx.db.insertInto('bundle_options').values(made).execute()),
      counts,
    );
    assert.deepEqual(await moves(id, () => ofOption.set({ name: 'M' }).execute()), tree, 'option renamed');
    assert.deepEqual(await moves(id, () => ofOption.set({ type: 'INCLUDED' }).execute()), counts, 'type');

    const product = { ...at, bundle_id: id, option_id: made.id, product_id: 'P', properties: '{}' };
    const opp = { ...product, id: 'opp_TRIGGER', display_order: 0, min_quantity: null, max_quantity: null };
    const ofProduct = ctx.db.updateTable('option_products').where('id', '=', opp.id);
    assert.deepEqual(
      await moves(id, () =>
        ctx.db
          .insertInto('option_products')
          .values({ ...opp, readonly_quantity: null, version: 1, created_at: '', updated_at: '' })
          .execute(),
      ),
      tree,
    );
    assert.deepEqual(await moves(id, () => ofProduct.set({ display_order: 3 }).execute()), tree);

    const book = {
      ...at,
      id: 'pb_TRIGGER',
      bundle_option_id: made.id,
      name: 'B',
      description: null,
      is_deleted: false,
      effective_start_date: null,
      effective_end_date: null,
      version: 1,
      created_at: 'x',
      updated_at: 'x',
    };
    const ofBook = ctx.db.updateTable('price_books').where('id', '=', book.id);
    assert.deepEqual(await moves(id, () => ctx.db.insertInto('price_books').values(book).execute()), tree);
    assert.deepEqual(await moves(id, () => ofBook.set({ is_deleted: true }).execute()), tree);

    const entry = { ...at, price_book_id: book.id, product_id: 'P' };
    const ofEntry = (table: 'price_book_products' | 'price_book_prices' | 'product_variants') =>
      ctx.db.updateTable(table).where('price_book_id', '=', book.id);
    assert.deepEqual(
      await moves(id, () =>
        ctx.db
          .insertInto('price_book_products')
          .values({ ...entry, option_id: made.id, allow_unit_price_editing: false })
          .execute(),
      ),
      tree,
    );
    assert.deepEqual(
      await moves(id, () => ofEntry('price_book_products').set({ allow_unit_price_editing: true }).execute()),
      tree,
    );
    const price = { ...entry, currency: 'USD', standard_price: '1', list_price: null, adjustment: null };
    assert.deepEqual(
      await moves(id, () => ctx.db.insertInto('price_book_prices').values(price).execute()),
      tree,
    );
    assert.deepEqual(
      await moves(id, () => ofEntry('price_book_prices').set({ list_price: '2' }).execute()),
      tree,
    );
    const variants = { ...entry, is_dynamic: false, template: 'T', properties: '[]' };
    assert.deepEqual(
      await moves(id, () => ctx.db.insertInto('product_variants').values(variants).execute()),
      tree,
    );
    assert.deepEqual(
      await moves(id, () => ofEntry('product_variants').set({ template: 'U' }).execute()),
      tree,
    );

    for (const table of ['product_variants', 'price_book_prices', 'price_book_products'] as const) {
      assert.deepEqual(
        await moves(id, () => ctx.db.deleteFrom(table).where('price_book_id', '=', book.id).execute()),
        tree,
        `delete from ${table}`,
      );
    }
    assert.deepEqual(
      await moves(id, () => ctx.db.deleteFrom('price_books').where('id', '=', book.id).execute()),
      tree,
    );
    assert.deepEqual(
      await moves(id, () => ctx.db.deleteFrom('option_products').where('id', '=', opp.id).execute()),
      tree,
    );
    assert.deepEqual(
      await moves(id, () => ctx.db.deleteFrom('bundle_options').where('id', '=', made.id).execute()),
      counts,
    );

    const rule = {
      ...option,
      id: 'rul_TRIGGER',
      name: 'R',
      kind: 'requires' as const,
      when_json: '{}',
      then_json: '[]',
      message: null,
      is_active: true,
      display_order: 0,
    };
    const ofRule = ctx.db.updateTable('bundle_rules').where('id', '=', rule.id);
    assert.deepEqual(await moves(id, () => ctx.db.insertInto('bundle_rules').values(rule).execute()), tree);
    assert.deepEqual(await moves(id, () => ofRule.set({ is_active: false }).execute()), tree, 'rule');
    assert.deepEqual(
      await moves(id, () => ctx.db.deleteFrom('bundle_rules').where('id', '=', rule.id).execute()),
      tree,
    );
  });

  test('a bundle deleted with everything in it leaves the other bundles alone', async () => {
    const kept = (await createBundle(ctx)).bundle.id as string;
    const gone = (await createBundle(ctx)).bundle.id as string;
    const before = await versions(kept);
    await ctx.db.deleteFrom('bundles').where('id', '=', gone).execute();
    assert.deepEqual(await versions(kept), before);
  });
});
