import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadStamps, loadStampsWithKey } from '../../src/catalogue/catalogue.repository.ts';
import type { Db } from '../../src/db/database.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/database.ts';

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
