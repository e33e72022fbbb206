import { type Kysely, sql } from 'kysely';

// Approvals (contract C19, docs/approvals.md): the account's approval policies, the approver permission of a key,
// and the decisions on quotes. Decisions are keyed by the quote's number, not its id, so a quote's history of
// approvals carries over to every revision of it; they name policies by id without a foreign key, so deleting a
// policy leaves the history as it was.
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

  await db.schema
    .createTable('quote_approvals')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('quote_number', 'text', (c) => c.notNull())
    // Time-ordered: the history reads in the order it was made.
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('quote_id', 'text', (c) => c.notNull())
    .addColumn('quote_version', 'integer', (c) => c.notNull())
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) =>
      c.notNull().check(sql`decision in ('pending', 'approved', 'rejected', 'voided')`),
    )
    // Separation of duties: the key that submitted may not decide.
    .addColumn('submitted_key_id', 'text', (c) => c.notNull())
    .addColumn('submitted_at', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('key_name', 'text')
    .addColumn('comment', 'text')
    .addColumn('decided_at', 'text')
    .addPrimaryKeyConstraint('quote_approvals_pk', ['account_id', 'quote_number', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('quote_approvals').execute();
  await db.schema.alterTable('api_keys').dropColumn('approver').execute();
  await db.schema.dropTable('approval_policies').execute();
}
