import { type Kysely, sql } from 'kysely';

// Webhook endpoints and deliveries (docs/events-and-webhooks.md). Each endpoint keeps its own cursor into the events
// feed (`last_event_id`), so a write pays nothing for webhooks. Every key leads with account_id, even those the worker
// uses across accounts: it walks the small endpoints table and probes each endpoint's deliveries.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of event types, or ["*"].
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_enabled', 'boolean', (c) => c.notNull())
    .addColumn('disabled_reason', 'text', (c) => c.check(sql`disabled_reason in ('manual', 'failing')`))
    // Sealed signing secrets (webhooks/secrets.ts): the current one, and the one it replaced while it still signs.
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    // When the current run of failed attempts began; null after a success.
    .addColumn('failing_since', 'text')
    // The newest event already fanned out ('' for none): the worker reads the account's events past it.
    .addColumn('last_event_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['account_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    // JSON array of the latest attempts: { at, durationMs, responseStatus, error }.
    .addColumn('attempts', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    // No automatic attempt is made after this instant; the delivery then fails.
    .addColumn('give_up_at', 'text', (c) => c.notNull())
    // A worker's claim: other workers leave the delivery alone until the lease lapses.
    .addColumn('leased_until', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['account_id', 'endpoint_id', 'event_id'])
    .addForeignKeyConstraint(
      'webhook_deliveries_endpoint_fk',
      ['account_id', 'endpoint_id'],
      'webhook_endpoints',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    // A delivery lives as long as its event: the events' retention purge takes the deliveries with it.
    .addForeignKeyConstraint(
      'webhook_deliveries_event_fk',
      ['account_id', 'event_id'],
      'events',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  // The worker's probe for due deliveries of one endpoint, and the queue depth, read only pending rows.
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'endpoint_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // The purge of an event finds its deliveries.
  await db.schema
    .createIndex('webhook_deliveries_event_idx')
    .on('webhook_deliveries')
    .columns(['account_id', 'event_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
