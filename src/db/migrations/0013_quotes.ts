import { type Kysely, sql } from 'kysely';

// Quotes as records (docs/quotes.md): a row holds what the rep asked for and the lines as shown, names included,
// so a finalized quote is read and rendered without the catalogue; `quote_lines` repeats them as rows for queries.
// `version` counts revisions of one `number`; `row_version` moves with every write and makes the ETag.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('quote_numbers')
    .addColumn('account_id', 'text', (c) => c.notNull().primaryKey())
    // The last number handed out: taken with one upsert in the creating transaction.
    .addColumn('last_number', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('quotes')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .check(
          sql`status in ('draft', 'pending_approval', 'approved', 'open', 'accepted', 'declined', 'canceled', 'superseded')`,
        ),
    )
    .addColumn('currency', 'text', (c) => c.notNull())
    // The instant asked for (null: priced at the time of each write) and the instant the lines were priced at.
    .addColumn('at', 'text')
    .addColumn('priced_at', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('notes', 'text')
    .addColumn('customer_id', 'text')
    .addColumn('customer_name', 'text')
    .addColumn('customer_email', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('request_json', 'text', (c) => c.notNull())
    .addColumn('lines_json', 'text', (c) => c.notNull())
    .addColumn('violations_json', 'text', (c) => c.notNull())
    // Decisions on the quote (C19); an empty array until approvals exist.
    .addColumn('approvals_json', 'text', (c) => c.notNull())
    .addColumn('list_total', 'text', (c) => c.notNull())
    .addColumn('discount_total', 'text', (c) => c.notNull())
    .addColumn('total', 'text', (c) => c.notNull())
    // Lower-case title, customer and number, for the list's q filter.
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('submitted_key_id', 'text')
    .addColumn('submitted_at', 'text')
    .addColumn('finalized_at', 'text')
    .addColumn('accepted_at', 'text')
    .addColumn('declined_at', 'text')
    .addColumn('canceled_at', 'text')
    .addColumn('row_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('quotes_pk', ['account_id', 'id'])
    .addUniqueConstraint('quotes_number_version_key', ['account_id', 'number', 'version'])
    .execute();
  // The list's filters, each read newest first in id order.
  await db.schema
    .createIndex('quotes_status_idx')
    .on('quotes')
    .columns(['account_id', 'status', 'id'])
    .execute();
  await db.schema
    .createIndex('quotes_customer_idx')
    .on('quotes')
    .columns(['account_id', 'customer_id', 'id'])
    .execute();

  await db.schema
    .createTable('quote_lines')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('quote_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('bundle_id', 'text', (c) => c.notNull())
    .addColumn('option_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('product_name', 'text')
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('unit_price', 'text', (c) => c.notNull())
    .addColumn('discount_percent', 'text')
    .addColumn('list_total', 'text', (c) => c.notNull())
    .addColumn('total', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('quote_lines_pk', ['account_id', 'quote_id', 'position'])
    .addForeignKeyConstraint(
      'quote_lines_quote_fk',
      ['account_id', 'quote_id'],
      'quotes',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('quote_lines').execute();
  await db.schema.dropTable('quotes').execute();
  await db.schema.dropTable('quote_numbers').execute();
}
