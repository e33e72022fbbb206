import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('read_only', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addPrimaryKeyConstraint('api_keys_pk', ['account_id', 'id'])
    .execute();
  // Authentication looks a key up by its hash, the only thing known before the account is.
  await db.schema.createIndex('api_keys_key_hash_uq').unique().on('api_keys').column('key_hash').execute();
  // Operators revoke by key id alone.
  await db.schema.createIndex('api_keys_id_uq').unique().on('api_keys').column('id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
}
