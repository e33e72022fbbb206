import type { Kysely } from 'kysely';

// Approvals (contract C19, docs/approvals.md): the account's approval policies and the approver permission of a
// key. The decisions themselves live on the quote's row (approvals_json, migration 0013), written by the same
// compare-and-set as the transition they belong to.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('approval_policies')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    // The API's `when` as JSON text; its numbers keep the decimal text they were sent with.
    .addColumn('when_json', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('approval_policies_pk', ['account_id', 'id'])
    .execute();

  // A key that may approve and reject quotes; it can write as any read-write key can.
  await db.schema
    .alterTable('api_keys')
    .addColumn('approver', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('approver').execute();
  await db.schema.dropTable('approval_policies').execute();
}
