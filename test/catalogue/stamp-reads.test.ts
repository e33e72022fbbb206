import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadStamps, loadStampsWithKey } from '../../src/catalogue/catalogue.repository.ts';
import { connect, type DatabaseHandle } from '../../src/db/connect.ts';
import type { Db } from '../../src/db/database.ts';
import { adminQuery, createTestDatabase, dialects, type TestDatabase } from '../helpers/database.ts';

const now = new Date().toISOString();

async function seed(db: Db): Promise<void> {
  await db
    .insertInto('api_keys')
    .values(
      ['live', 'revoked'].map((id) => ({
        account_id: 'acme',
        id,
        name: null,
        key_hash: `hash-${id}`,
        read_only: false,
        created_at: now,
        revoked_at: id === 'revoked' ? now : null,
      })),
    )
    .execute();
  await db
    .insertInto('bundles')
    .values(
      ['a', 'b', 'c'].map((id) => ({
        account_id: 'acme',
        id,
        is_active: true,
        header_product_id: `P-${id}`,
        header_properties: '{}',
        cloned_bundle_temp_name: null,
        version: 1,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
}

/** The stamps as `id@version` (tree_version starts where the triggers start it, so only its presence is checked). */
function versions(stamps: Map<string, string>): string[] {
  return [...stamps].map(([id, stamp]) => `${id}@${stamp.split('.')[0]}`).sort();
}

for (const dialect of dialects) {
  describe(`stamp reads [${dialect}]`, () => {
    let database: TestDatabase;
    let db: Db;

    before(async () => {
      database = await createTestDatabase(dialect);
      db = database.handle.db;
      await seed(db);
    });

    after(() => database?.drop());

    test('answer the asked bundles that exist, of any count, and whether the key is live', async () => {
      assert.deepEqual(versions(await loadStamps(db, 'acme', ['a'])), ['a@1']);
      assert.deepEqual(versions(await loadStamps(db, 'acme', ['c', 'missing', 'a'])), ['a@1', 'c@1']);
      assert.deepEqual(versions(await loadStamps(db, 'other', ['a'])), []);
      const read = await loadStampsWithKey(db, 'acme', ['a', 'b'], 'live');
      assert.deepEqual({ ...read, stamps: versions(read.stamps) }, { stamps: ['a@1', 'b@1'], keyLive: true });
      const none = await loadStampsWithKey(db, 'acme', ['missing'], 'live');
      assert.deepEqual({ ...none, stamps: versions(none.stamps) }, { stamps: [], keyLive: true });
      assert.equal((await loadStampsWithKey(db, 'acme', ['a'], 'revoked')).keyLive, false);
      const gone = await loadStampsWithKey(db, 'acme', ['a'], 'unknown');
      assert.deepEqual({ ...gone, stamps: versions(gone.stamps) }, { stamps: [], keyLive: false });
      assert.equal((await loadStampsWithKey(db, 'other', ['a'], 'live')).keyLive, false);
    });

    // PostgreSQL may plan a named statement once for any values after its fifth run: a change must still show.
    test('see every change, however often they ran before', async () => {
      for (let i = 0; i < 10; i++) await loadStampsWithKey(db, 'acme', ['a'], 'live');
      const before = (await loadStampsWithKey(db, 'acme', ['a'], 'live')).stamps.get('a');
      await db.updateTable('bundles').set({ version: 2 }).where('id', '=', 'a').execute();
      const after = (await loadStampsWithKey(db, 'acme', ['a'], 'live')).stamps.get('a');
      assert.notEqual(after, before);
      assert.deepEqual(versions(await loadStamps(db, 'acme', ['a'])), ['a@2']);
    });
  });
}

describe('the stamp read as a named statement [postgres]', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  let lost: Promise<void>;
  let onLost = () => {};

  before(async () => {
    database = await createTestDatabase('postgres');
    await seed(database.handle.db);
    handle = connect({
      databaseUrl: database.databaseUrl,
      sqlitePath: ':memory:',
      poolSize: 1,
      onPoolError: () => onLost(),
    });
  });

  after(async () => {
    await handle?.db.destroy();
    await database?.drop();
  });

  /** The statements the pool's one connection has prepared. */
  async function prepared(): Promise<string[]> {
    const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
      handle.db,
    );
    return rows.map((row) => row.statement);
  }

  test('is prepared once per connection, again on a new one, and holds when the tables change', async () => {
    await loadStampsWithKey(handle.db, 'acme', ['a'], 'live');
    await loadStampsWithKey(handle.db, 'acme', ['a', 'b', 'c'], 'live');
    const stampReads = (await prepared()).filter((text) => text.includes('"api_keys"'));
    assert.equal(stampReads.length, 1, 'one statement whatever the count of ids');

    // The connection is cut, as by a restart of the server: the pool drops it and the next read prepares anew.
    // Only that one: cutting every connection to the database also cut the seeding pool's idle one, which that pool
    // could hand out before it had heard, failing the migration below (57P01) in one CI run of many.
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db);
    const [backend] = rows;
    assert.ok(backend, 'the connection says its server process');
    lost = new Promise((resolve) => {
      onLost = resolve;
    });
    await adminQuery(`select pg_terminate_backend(${Number(backend.pid)})`);
    await lost;
    const read = await loadStampsWithKey(handle.db, 'acme', ['a', 'b'], 'live');
    assert.deepEqual({ ...read, stamps: versions(read.stamps) }, { stamps: ['a@1', 'b@1'], keyLive: true });
    assert.deepEqual(
      (await prepared()).filter((text) => text.includes('"api_keys"')),
      stampReads,
      'prepared on the new connection',
    );
    assert.deepEqual(
      (await prepared()).filter((text) => text.includes('"api_keys"')),
      stampReads,
      'prepared on the new connection',
    );

    // A migration under a running service: the server plans the statement again for the tables as they now are.
    await database.handle.db.schema.alterTable('bundles').addColumn('added_later', 'text').execute();
    await database.handle.db.schema.alterTable('api_keys').dropColumn('name').execute();
    await database.handle.db.updateTable('bundles').set({ version: 3 }).where('id', '=', 'b').execute();
    const changed = await loadStampsWithKey(handle.db, 'acme', ['a', 'b'], 'live');
    assert.deepEqual(
      { ...changed, stamps: versions(changed.stamps) },
      { stamps: ['a@1', 'b@3'], keyLive: true },
    );
    assert.deepEqual(versions(await loadStamps(handle.db, 'acme', ['b'])), ['b@3']);

    // A column it selects changes type: the server will not run the statement under its name again on this
    // connection, so it is prepared anew under another, at once and for the reads after.
    await database.handle.db.schema
      .alterTable('bundles')
      .alterColumn('version', (column) => column.setDataType('bigint'))
      .execute();
    for (let i = 0; i < 3; i++) {
      const retyped = await loadStampsWithKey(handle.db, 'acme', ['a', 'b'], 'live');
      assert.deepEqual(
        { ...retyped, stamps: versions(retyped.stamps) },
        { stamps: ['a@1', 'b@3'], keyLive: true },
      );
      assert.deepEqual(versions(await loadStamps(handle.db, 'acme', ['b'])), ['b@3']);
    }
  });
});
