import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sql } from 'kysely';
import { describeEachDatabase } from '../helpers/app.ts';

describeEachDatabase('API keys at rest', (ctx) => {
  test('the database holds a SHA-256 hash of each key, never the key or a piece of it', async () => {
    const plaintexts = [ctx.key, await ctx.newKey('acme', { readOnly: true }), await ctx.newKey('other')];
    // Used once each, so any store-on-use (a last-used column, a cache table) would have written by now.
    for (const key of plaintexts) assert.equal((await ctx.call('GET', '/v1/bundles', { key })).status, 200);

    const rows = await ctx.db.selectFrom('api_keys').selectAll().execute();
    assert.equal(rows.length, plaintexts.length);
    for (const row of rows) assert.match(row.key_hash, /^[0-9a-f]{64}$/);

    // Every table, every column: no key text anywhere, in any form a pattern search would find.
    const { rows: tables } =
      ctx.dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(ctx.db)
        : await sql<{
            name: string;
          }>`select tablename as name from pg_tables where schemaname = 'public'`.execute(ctx.db);
    assert.ok(tables.some((t) => t.name === 'api_keys'));
    const everything = [];
    for (const { name } of tables) {
      everything.push(...(await sql.raw(`select * from "${name}"`).execute(ctx.db)).rows);
    }
    const dump = JSON.stringify(everything);
    for (const key of plaintexts) {
      assert.ok(!dump.includes(key.slice('cpq_'.length, 'cpq_'.length + 12)), 'a key is stored in clear');
    }

    if (ctx.dialect === 'sqlite') {
      // The file and its write-ahead log, byte for byte: nothing kept beside the rows either.
      const bytes = ['', '-wal']
        .map((suffix) => `${ctx.database.sqlitePath}${suffix}`)
        .filter((path) => existsSync(path))
        .map((path) => readFileSync(path).toString('latin1'))
        .join('');
      assert.ok(bytes.length > 0);
      for (const key of plaintexts)
        assert.ok(!bytes.includes(key.slice(4, 16)), 'a key is in the database file');
    }
  });
});
