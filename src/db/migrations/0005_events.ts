import type { Kysely } from 'kysely';

// The outbox: every write inserts its events in its own transaction. Ids are time-sortable, and a feed read by id
// never skips one: it waits for the account's writers in flight (events.repository.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    // `{ object }` as JSON text, written once and served as it is.
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('events_pk', ['account_id', 'id'])
    .execute();
  // The feed filtered by type walks (account_id, type, id); the newest id across accounts orders the next one,
  // and the purge takes the oldest first.
  await db.schema.createIndex('events_type_idx').on('events').columns(['account_id', 'type', 'id']).execute();
  await db.schema.createIndex('events_id_idx').on('events').column('id').unique().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('events').execute();
}
