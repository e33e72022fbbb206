import { type Kysely, sql } from 'kysely';

// quote.expired (docs/quotes.md): an open quote past expiresAt reads as expired without any write; a sweep records
// the event once per quote, marking the row in the same compare-and-set, and finds the quotes left to mark through
// a partial index that holds only open quotes not yet marked.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('quotes').addColumn('expiry_recorded_at', 'text').execute();
  await db.schema
    .createIndex('quotes_unrecorded_expiry_idx')
    .on('quotes')
    .column('expires_at')
    .where(sql.ref('status'), '=', 'open')
    .where(sql.ref('expiry_recorded_at'), 'is', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('quotes_unrecorded_expiry_idx').execute();
  await db.schema.alterTable('quotes').dropColumn('expiry_recorded_at').execute();
}
