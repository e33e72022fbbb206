// The text a price book search matches is stored beside the properties (src/db/search-text.ts): these check that
// every write keeps it in step, and that the migration which added it filled it for the products stored before.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { connect } from '../../src/db/connect.ts';
import { migrateToLatest, migrations } from '../../src/db/migrate.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { callApp, describeEachDatabase, testConfig } from '../helpers/app.ts';
import { adminQuery, dialects, postgresAdminUrl } from '../helpers/database.ts';
import { createBundle } from '../helpers/factories.ts';

describeEachDatabase('price book search text', (ctx) => {
  const search = async (bookId: string, q: string) =>
    (await ctx.call('GET', `/v1/pricebooks/${bookId}/pricedProducts`, { query: { q } })).body.results.map(
      (r: { productId: string }) => r.productId,
    );

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
