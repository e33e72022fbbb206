import type { Kysely } from 'kysely';

// A bundle's natural key in a catalogue file (README "Catalogue as code"). Null means "its header productId",
// which is what a bundle made through the API is known by; a bundle made by a catalogue apply keeps the key its
// file gave it. Where set, it is unique in the account, so two applies racing to create one key cannot both win.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bundles').addColumn('catalogue_key', 'text').execute();
  await db.schema
    .createIndex('bundles_catalogue_key_uq')
    .unique()
    .on('bundles')
    .columns(['account_id', 'catalogue_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('bundles_catalogue_key_uq').execute();
  await db.schema.alterTable('bundles').dropColumn('catalogue_key').execute();
}
