import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Dialect } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/database.ts';

interface Key {
  table: string;
  name: string;
  kind: 'primary key' | 'unique' | 'foreign key' | 'index';
  columns: string[];
}

// Authentication finds a key by its hash before any account is known, and operators revoke by key id alone. Event
// ids are ordered across accounts (each write's ids follow the newest of all), and retention purges the oldest of
// all accounts. The expiry sweep finds the open quotes past their expiresAt across accounts, as retention does.
const globalLookups = new Set([
  'api_keys api_keys_key_hash_uq',
  'api_keys api_keys_id_uq',
  'events events_id_idx',
  'quotes quotes_unrecorded_expiry_idx',
]);
const migratorTables = new Set(['kysely_migration', 'kysely_migration_lock']);

async function postgresKeys(database: TestDatabase): Promise<Key[]> {
  const { rows } = await sql<{ table: string; name: string; kind: string; columns: string[] }>`
    select c.relname as table, i.relname as name,
      case when x.indisprimary then 'primary key' when x.indisunique then 'unique' else 'index' end as kind,
      array(select a.attname::text from unnest(x.indkey) with ordinality k(n, o)
            join pg_attribute a on a.attrelid = c.oid and a.attnum = k.n order by k.o) as columns
    from pg_index x
    join pg_class c on c.oid = x.indrelid
    join pg_class i on i.oid = x.indexrelid
    join pg_namespace s on s.oid = c.relnamespace
    where s.nspname = 'public'
    union all
    select c.relname, f.conname, 'foreign key',
      array(select a.attname::text from unnest(f.conkey) with ordinality k(n, o)
            join pg_attribute a on a.attrelid = c.oid and a.attnum = k.n order by k.o)
    from pg_constraint f
    join pg_class c on c.oid = f.conrelid
    join pg_namespace s on s.oid = c.relnamespace
    where s.nspname = 'public' and f.contype = 'f'`.execute(database.handle.db);
  return rows.map((row) => ({ ...row, kind: row.kind as Key['kind'] }));
}

async function sqliteKeys(database: TestDatabase): Promise<Key[]> {
  const { db } = database.handle;
  const keys: Key[] = [];
  // Ordinary tables only: the shadow tables of the search's FTS5 index (migration 0011) are that index's own
  // storage, keyed by option_products' rowid, and every match read from it is joined back to its account's row.
  const tables = await sql<{ name: string }>`
    select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%'`.execute(
    db,
  );
  for (const { name: table } of tables.rows) {
    const indexes = await sql<{ name: string; unique: number; origin: string }>`
      select name, "unique", origin from pragma_index_list(${table})`.execute(db);
    for (const index of indexes.rows) {
      const columns = await sql<{ name: string }>`
        select name from pragma_index_info(${index.name}) order by seqno`.execute(db);
      keys.push({
        table,
        name: index.name,
        kind: index.origin === 'pk' ? 'primary key' : index.unique ? 'unique' : 'index',
        columns: columns.rows.map((c) => c.name),
      });
    }
    const foreign = await sql<{ id: number; from: string }>`
      select id, "from" from pragma_foreign_key_list(${table}) order by id, seq`.execute(db);
    const byId = new Map<number, string[]>();
    for (const row of foreign.rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row.from]);
    for (const [id, columns] of byId) keys.push({ table, name: `fk ${id}`, kind: 'foreign key', columns });
  }
  return keys;
}

async function keyLookupPlan(database: TestDatabase, dialect: Dialect): Promise<string> {
  const { db } = database.handle;
  const hash = 'a'.repeat(64);
  if (dialect === 'sqlite') {
    const plan = await sql<{ detail: string }>`
      explain query plan select id from api_keys where key_hash = ${hash} and revoked_at is null`.execute(db);
    return plan.rows.map((r) => r.detail).join('\n');
  }
  // With sequential scans priced out, the plan shows whether an index can answer at all.
  return db.connection().execute(async (connection) => {
    await sql`set enable_seqscan = off`.execute(connection);
    const plan = await sql<{ 'QUERY PLAN': string }>`
      explain select id from api_keys where key_hash = ${hash} and revoked_at is null`.execute(connection);
    await sql`reset enable_seqscan`.execute(connection);
    return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

for (const dialect of dialects) {
  describe(`database schema [${dialect}]`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(async () => {
      await database?.drop();
    });

    test('every key and index of a tenant table starts with account_id', async () => {
      const keys = dialect === 'sqlite' ? await sqliteKeys(database) : await postgresKeys(database);
      const tenantKeys = keys.filter((k) => !migratorTables.has(k.table));
      assert.ok(tenantKeys.some((k) => k.kind === 'primary key'));
      const offending = tenantKeys
        .filter((k) => !globalLookups.has(`${k.table} ${k.name}`) && k.columns[0] !== 'account_id')
        .map((k) => `${k.table} ${k.kind} ${k.name} (${k.columns.join(', ')})`);
      assert.deepEqual(offending, []);
      const tables = new Set(tenantKeys.map((k) => k.table));
      for (const table of tables) {
        assert.ok(
          tenantKeys.some((k) => k.table === table && k.kind === 'primary key'),
          `${table} has a primary key`,
        );
      }
    });

    test('an API key is found through the unique index on its hash, not by a scan', async () => {
      const plan = await keyLookupPlan(database, dialect);
      assert.match(plan, /api_keys_key_hash_uq/, plan);
      assert.doesNotMatch(plan, /SCAN api_keys\b|Seq Scan/, plan);
    });

    test('migrating again changes nothing', async () => {
      assert.deepEqual(await migrateToLatest(database.handle.db), []);
    });
  });
}
