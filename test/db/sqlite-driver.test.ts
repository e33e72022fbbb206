import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { sqliteDialect } from '../../src/db/sqlite-driver.ts';

const directory = mkdtempSync(join(tmpdir(), 'cpq-sqlite-driver-'));
after(() => rmSync(directory, { recursive: true, force: true }));

test('a kept statement maps its rows by the columns it returns now, after another connection changed the table', async () => {
  const path = join(directory, 'columns.db');
  const other = new DatabaseSync(path);
  other.exec('create table t (a integer, b integer); insert into t values (1, 2)');
  const db = new Kysely<{ t: { a: number; b: number; c?: number } }>({ dialect: sqliteDialect(path) });
  try {
    const everything = () => db.selectFrom('t').selectAll().execute();
    const named = () => db.selectFrom('t').select(['b', 'a']).execute();
    assert.deepEqual(await everything(), [{ a: 1, b: 2 }]);
    assert.deepEqual(await named(), [{ b: 2, a: 1 }]);
    // The same texts again after the schema changed under the kept statements: SQLite prepares them anew, and
    // `*` now returns three columns.
    other.exec('alter table t add column c integer; update t set c = 3');
    assert.deepEqual(await everything(), [{ a: 1, b: 2, c: 3 }]);
    assert.deepEqual(await named(), [{ b: 2, a: 1 }]);
    assert.deepEqual((await sql<{ n: number }>`select count(*) as n from t`.execute(db)).rows, [{ n: 1 }]);
  } finally {
    await db.destroy();
    other.close();
  }
});
