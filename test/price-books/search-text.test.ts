// The text a price book search matches is stored beside the properties (src/db/search-text.ts): these check that
// every write keeps it in step, and SQLite's trigram index of it (migration 0011) too, that the migrations filled
// both for the products stored before, and that SQLite reads the index when it should.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  CompiledQuery,
  createQueryId,
  type KyselyPlugin,
  Migrator,
  type RootOperationNode,
  sql,
} from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { connect } from '../../src/db/connect.ts';
import { migrateToLatest, migrations } from '../../src/db/migrate.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { fewMatches } from '../../src/price-books/price-books.repository.ts';
import { searchPricedProducts } from '../../src/price-books/price-books.service.ts';
import { callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { adminQuery, dialects, postgresAdminUrl } from '../helpers/database.ts';
import { createBundle } from '../helpers/factories.ts';

describeEachDatabase('price book search text', (ctx) => {
  const search = async (bookId: string, q: string, key = ctx.key) =>
    (
      await ctx.call('GET', `/v1/pricebooks/${bookId}/pricedProducts`, { key, query: { q } })
    ).body.results.map((r: { productId: string }) => r.productId);

  /** On SQLite, FTS5 checks its trigram index against option_products row by row, and throws if they differ. */
  async function assertIndexExact() {
    if (ctx.dialect !== 'sqlite') return;
    await sql`insert into option_products_search (option_products_search, rank)
      values ('integrity-check', 1)`.execute(ctx.db);
  }

  /** SQLite's plan of the statement a search runs. */
  async function searchPlan(bookId: string, q: string): Promise<string> {
    let node: RootOperationNode | undefined;
    const capture: KyselyPlugin = {
      transformQuery: (args) => {
        node = args.node;
        return args.node;
      },
      transformResult: async ({ result }) => result,
    };
    await searchPricedProducts(ctx.db.withPlugin(capture), 'acme', bookId, { q });
    assert.ok(node);
    const statement = ctx.db.getExecutor().compileQuery(node, createQueryId());
    const plan = await ctx.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]),
    );
    return plan.rows.map((r) => r.detail).join('\n');
  }

  async function bundle() {
    const { options } = await createBundle(ctx, {
      options: [
        {
          name: 'Screens',
          products: [
            { productId: 'SCR-1', properties: { label: 'Écran Large', note: 'a\\b' } },
            { productId: 'SCR-2', properties: { label: 'ΣΟΦΟΣ' } },
          ],
        },
      ],
    });
    const [option] = options;
    return { option, product: `/v1/bundles/${option.bundleId}/options/${option.id}/products` };
  }

  test('a change of properties moves the search text with it; other changes keep it', async () => {
    const { option, product } = await bundle();
    await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: [{ productId: 'SCR-1', currency: 'USD', standardPrice: 1 }],
    });
    assert.deepEqual(await search(option.priceBookId, 'écran'), ['SCR-1']);
    const changed = await ctx.call('PUT', `${product}/SCR-1`, {
      body: { properties: { label: 'Moniteur' } },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(await search(option.priceBookId, 'écran'), []);
    assert.deepEqual(await search(option.priceBookId, 'MONITEUR'), ['SCR-1']);
    const moved = await ctx.call('PUT', `${product}/SCR-1`, { body: { displayOrder: 7 } });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(await search(option.priceBookId, 'moniteur'), ['SCR-1']);
  });

  test('products added later and copies of an option are found', async () => {
    const { option, product } = await bundle();
    const added = await ctx.call('POST', product, {
      body: [{ productId: 'SCR-3', properties: { label: 'Projecteur' } }],
    });
    assert.equal(added.status, 201, added.text);
    const entry = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: [{ productId: 'SCR-3', currency: 'USD', standardPrice: 1 }],
    });
    assert.equal(entry.status, 200, entry.text);
    assert.deepEqual(await search(option.priceBookId, 'projecteur'), ['SCR-3']);
    const copy = await ctx.call('POST', `/v1/bundles/${option.bundleId}/options/${option.id}/clone`);
    assert.equal(copy.status, 201, copy.text);
    assert.deepEqual(await search(copy.body.priceBook.id, 'PROJECTEUR'), ['SCR-3']);
  });

  test('Unicode case folding, a backslash and a final sigma match as JavaScript folds them', async () => {
    const { option } = await bundle();
    await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: ['SCR-1', 'SCR-2'].map((productId) => ({ productId, currency: 'USD', standardPrice: 1 })),
    });
    assert.deepEqual(await search(option.priceBookId, 'ÉCRAN'), ['SCR-1']);
    assert.deepEqual(await search(option.priceBookId, 'a\\b'), ['SCR-1']);
    assert.deepEqual(await search(option.priceBookId, '\\'), ['SCR-1']);
    // 'ΣΟΦΟΣ'.toLowerCase() ends in a final sigma (ς); a needle ending in σ is another text.
    assert.deepEqual(await search(option.priceBookId, 'ΣΟΦΟΣ'), ['SCR-2']);
    assert.deepEqual(await search(option.priceBookId, 'σοφο\u03c2'), ['SCR-2']);
    assert.deepEqual(await search(option.priceBookId, 'σοφο\u03c3'), []);
  });

  test('SQLite finds a q of three characters or more through its trigram index; a shorter one among the entries', async (t) => {
    if (ctx.dialect !== 'sqlite') return t.skip('PostgreSQL plans by its statistics');
    const { option } = await bundle();
    const indexed = await searchPlan(option.priceBookId, 'écr');
    assert.match(indexed, /SCAN t VIRTUAL TABLE INDEX \d+:M/, indexed);
    assert.match(indexed, /SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)/, indexed);
    for (const q of ['éc', 'Σ']) {
      const plan = await searchPlan(option.priceBookId, q);
      assert.doesNotMatch(plan, /VIRTUAL TABLE/, plan);
    }
  });

  test('a q held by more texts than the index is read for finds the same entries among the book’s', async () => {
    const {
      options: [option],
    } = await createBundle(ctx, {
      options: [
        {
          name: 'Cables',
          products: Array.from({ length: fewMatches + 1 }, (_, i) => ({
            productId: `CBL-${String(i).padStart(4, '0')}`,
            properties: { label: i % 2 ? 'Câble court' : 'Câble long' },
          })),
        },
      ],
    });
    const priced = await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: option.products.map((p: { productId: string }) => ({
        productId: p.productId,
        currency: 'USD',
        standardPrice: 1,
      })),
    });
    assert.equal(priced.status, 200, priced.text);
    const page = async (q: string) =>
      (
        await ctx.call('GET', `/v1/pricebooks/${option.priceBookId}/pricedProducts`, {
          query: { q, limit: '2' },
        })
      ).body;
    const common = await page('CÂBLE');
    assert.equal(common.total, fewMatches + 1);
    assert.deepEqual(
      common.results.map((r: { productId: string }) => r.productId),
      ['CBL-0000', 'CBL-0001'],
    );
    const half = await page('câble court');
    assert.equal(half.total, Math.floor((fewMatches + 1) / 2));
    assert.deepEqual(
      half.results.map((r: { productId: string }) => r.productId),
      ['CBL-0001', 'CBL-0003'],
    );
    const one = await page('cbl-0007');
    assert.equal(one.total, 1);
    if (ctx.dialect === 'sqlite') {
      const plan = await searchPlan(option.priceBookId, 'câble');
      assert.match(plan, /SEARCH p USING INDEX option_products_option_idx/, plan);
    }
  });

  test('every write keeps the index exact: products added, changed, removed, options and bundles deleted', async () => {
    const { option, product } = await bundle();
    const book = option.priceBookId;
    const price = async (bookId: string, productId: string) => {
      const priced = await ctx.call('PUT', `/v1/pricebooks/${bookId}/prices`, {
        body: [{ productId, currency: 'USD', standardPrice: 1 }],
      });
      assert.equal(priced.status, 200, priced.text);
    };
    await price(book, 'SCR-1');
    await price(book, 'SCR-2');
    // The last product removed, then one added: SQLite may give it the removed row's rowid.
    const removed = await ctx.call('DELETE', `/v1/bundles/${option.bundleId}/options/${option.id}/SCR-2`);
    assert.equal(removed.status, 200, removed.text);
    const added = await ctx.call('POST', product, {
      body: [{ productId: 'SCR-4', properties: { label: 'Casque audio' } }],
    });
    assert.equal(added.status, 201, added.text);
    await price(book, 'SCR-4');
    assert.deepEqual(await search(book, 'σοφος'), []);
    assert.deepEqual(await search(book, 'casque'), ['SCR-4']);
    assert.deepEqual(await search(book, 'scr-'), ['SCR-1', 'SCR-4']);
    await assertIndexExact();

    const changed = await ctx.call('PUT', `${product}/SCR-4`, {
      body: { properties: { label: 'Enceinte' } },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(await search(book, 'casque'), []);
    assert.deepEqual(await search(book, 'enceinte'), ['SCR-4']);
    await assertIndexExact();

    const copy = await ctx.call('POST', `/v1/bundles/${option.bundleId}/options/${option.id}/clone`);
    assert.equal(copy.status, 201, copy.text);
    const deleted = await ctx.call('DELETE', `/v1/bundles/${option.bundleId}/options/${option.id}`);
    assert.equal(deleted.status, 204, deleted.text);
    assert.deepEqual(await search(copy.body.priceBook.id, 'enceinte'), ['SCR-4']);
    await assertIndexExact();

    // The index names products by rowid, which option_products does not declare: VACUUM keeps it all the same.
    if (ctx.dialect === 'sqlite') await sql`vacuum`.execute(ctx.db);
    assert.deepEqual(await search(copy.body.priceBook.id, 'enceinte'), ['SCR-4']);
    await assertIndexExact();

    const gone = await ctx.call('DELETE', `/v1/bundles/${option.bundleId}`);
    assert.equal(gone.status, 204, gone.text);
    await assertIndexExact();
    if (ctx.dialect === 'sqlite') {
      const left = await sql<{
        n: number;
      }>`select count(*) as n from option_products_search('"enceinte"')`.execute(ctx.db);
      assert.equal(left.rows[0]?.n, 0);
    }
  });

  test('a catalogue apply keeps the index exact: properties and products changed, the bundle pruned', async () => {
    const key = await ctx.newKey('search-catalogue');
    const file = (productId: string, label: string) => ({
      formatVersion: 1,
      bundles: [
        {
          header: { productId: 'DESK' },
          options: [
            {
              name: 'Lamps',
              products: [{ productId, properties: { label }, entry: { prices: { USD: { listPrice: 1 } } } }],
            },
          ],
        },
      ],
    });
    const apply = async (body: unknown, query = '') => {
      const applied = await ctx.call('POST', `/v1/catalogue/apply${query}`, { key, body });
      assert.equal(applied.status, 200, applied.text);
    };
    const book = async () =>
      (
        await ctx.db
          .selectFrom('price_books')
          .select('id')
          .where('account_id', '=', 'search-catalogue')
          .executeTakeFirstOrThrow()
      ).id;
    await apply(file('LAMP-1', 'Halogène'));
    assert.deepEqual(await search(await book(), 'halogène', key), ['LAMP-1']);
    await apply(file('LAMP-1', 'Néon'));
    assert.deepEqual(await search(await book(), 'halogène', key), []);
    assert.deepEqual(await search(await book(), 'néon', key), ['LAMP-1']);
    await assertIndexExact();
    await apply(file('LAMP-2', 'Néon'), '?prune=true');
    assert.deepEqual(await search(await book(), 'lamp-1', key), []);
    assert.deepEqual(await search(await book(), 'lamp-2', key), ['LAMP-2']);
    await assertIndexExact();
    await apply({ formatVersion: 1, bundles: [] }, '?prune=true');
    await assertIndexExact();
  });

  test('the migration fills the search text of products stored before it', async () => {
    const { option } = await bundle();
    await ctx.call('PUT', `/v1/pricebooks/${option.priceBookId}/prices`, {
      body: [{ productId: 'SCR-1', currency: 'USD', standardPrice: 1 }],
    });
    const { db } = ctx;
    const undone = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(
      '0009_catalogue_keys',
    );
    assert.equal(undone.error, undefined);
    const later = Object.keys(migrations).filter((name) => name > '0009_catalogue_keys');
    assert.deepEqual(await migrateToLatest(db), later);
    assert.deepEqual(await search(option.priceBookId, 'écran large'), ['SCR-1']);
    assert.deepEqual(await search(option.priceBookId, 'scr-'), ['SCR-1']);
    await assertIndexExact();
  });
});

test('PostgreSQL: a role that may not create extensions migrates all the same, and searches without the index', {
  skip: !dialects.includes('postgres'),
}, async () => {
  const name = `cpq_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const role = `${name}_owner`;
  const urlOf = (user: string) => {
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    url.username = user;
    return url.toString();
  };
  await adminQuery(`create role ${role} login`);
  await adminQuery(`create database ${name}`);
  const admin = new pg.Client({ connectionString: urlOf('postgres') });
  await admin.connect();
  await admin.query(`grant usage, create on schema public to ${role}`);
  await admin.end();
  // The role may create tables, but not extensions: it has no CREATE on the database.
  const handle = connect({ databaseUrl: urlOf(role), sqlitePath: ':memory:' });
  try {
    await migrateToLatest(handle.db);
    const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes
        where tablename = 'option_products'`.execute(handle.db);
    assert.ok(!indexes.rows.some((r) => r.indexname === 'option_products_search_trgm'));
    const app = await buildApp({ config: testConfig(), database: handle });
    try {
      const key = (await createKey(handle.db, { accountId: 'acme', name: null, readOnly: false })).plaintext;
      const call = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
        callApp(app, key, method, url, { body });
      const made = await call('POST', '/v1/bundles', {
        header: { productId: 'HDR', properties: {} },
        isActive: true,
      });
      assert.equal(made.status, 201, made.text);
      const option = await call('POST', `/v1/bundles/${made.body.id}/options`, {
        name: 'Screens',
        products: [{ productId: 'SCR-1', properties: { label: 'Écran' } }],
      });
      assert.equal(option.status, 201, option.text);
      const book = option.body.priceBookId;
      await call('PUT', `/v1/pricebooks/${book}/prices`, [
        { productId: 'SCR-1', currency: 'USD', standardPrice: 1 },
      ]);
      const found = await call('GET', `/v1/pricebooks/${book}/pricedProducts?q=%C3%89CRAN`);
      assert.deepEqual(
        found.body.results.map((r: { productId: string }) => r.productId),
        ['SCR-1'],
      );
    } finally {
      await app.close();
    }
  } finally {
    await handle.db.destroy();
    await adminQuery(`drop database if exists ${name} with (force)`);
    await adminQuery(`drop role if exists ${role}`);
  }
});
