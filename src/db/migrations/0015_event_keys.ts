import type { Kysely } from 'kysely';

// The key that made each event's write, and its name as it was then (as a quote's approvals keep it), so a feed
// says who changed what. Null for the events written before, by the command line or by the service itself.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').addColumn('key_id', 'text').execute();
  await db.schema.alterTable('events').addColumn('key_name', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('key_name').execute();
  await db.schema.alterTable('events').dropColumn('key_id').execute();
}
