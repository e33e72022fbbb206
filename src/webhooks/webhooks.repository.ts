import { PostgresAdapter, type Selectable, sql, type Updateable } from 'kysely';
import type { Executor, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/database.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type DeliveryKey = { accountId: string; endpointId: string; eventId: string };

// A literal, not a parameter: only then do both planners see that the partial index of pending rows applies.
const pending = sql.lit<'pending'>('pending');

/** A parameter in a select list, typed: PostgreSQL cannot infer it there. */
const text = (value: string) => sql<string>`cast(${value} as text)`;

export async function insertEndpoint(db: Executor, row: EndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function countEndpoints(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findEndpoint(
  db: Executor,
  accountId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listEndpoints(db: Executor, accountId: string): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

export async function updateEndpoint(
  db: Executor,
  accountId: string,
  id: string,
  fields: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set(fields)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Executor, accountId: string, id: string): Promise<void> {
  await db.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).where('id', '=', id).execute();
}

/**
 * The endpoint's row, locked for a fan-out; undefined when another worker holds it (PostgreSQL skips it) or it is
 * disabled or gone. SQLite runs one write transaction at a time, so the row needs no lock there.
 */
export async function lockEndpointForFanOut(
  tx: Executor,
  accountId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  const postgres = tx.getExecutor().adapter instanceof PostgresAdapter;
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('is_enabled', '=', true)
    .$if(postgres, (query) => query.forUpdate().skipLocked())
    .executeTakeFirst();
}

/** Locks the endpoint's row (PostgreSQL) before a delivery of it is written, the order every writer follows. */
export async function lockEndpoint(
  tx: Executor,
  accountId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  const postgres = tx.getExecutor().adapter instanceof PostgresAdapter;
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .$if(postgres, (query) => query.forUpdate())
    .executeTakeFirst();
}

/**
 * One pending delivery for each of the account's events in (afterId, uptoId] of the endpoint's types (all for
 * null); one statement, which the events' primary key serves. A delivery already there is left as it is.
 */
export async function insertDeliveries(
  tx: Executor,
  endpoint: { accountId: string; id: string; types: string[] | null },
  range: { afterId: string; uptoId: string },
  times: { now: string; giveUpAt: string },
): Promise<number> {
  const result = await tx
    .insertInto('webhook_deliveries')
    .columns([
      'account_id',
      'endpoint_id',
      'event_id',
      'event_type',
      'status',
      'attempts',
      'attempt_count',
      'next_attempt_at',
      'give_up_at',
      'created_at',
      'updated_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('events')
        .select([
          'account_id',
          text(endpoint.id).as('endpoint_id'),
          'id',
          'type',
          pending.as('status'),
          sql.lit('[]').as('attempts'),
          sql.lit(0).as('attempt_count'),
          text(times.now).as('next_attempt_at'),
          text(times.giveUpAt).as('give_up_at'),
          text(times.now).as('created_at'),
          text(times.now).as('updated_at'),
        ])
        .where('account_id', '=', endpoint.accountId)
        .where('id', '>', range.afterId)
        .where('id', '<=', range.uptoId)
        .$if(endpoint.types !== null, (query) => query.where('type', 'in', endpoint.types as string[])),
    )
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

export interface EndpointWithWork extends EndpointRow {
  /** Events past its cursor wait to be fanned out. */
  has_events: boolean | number;
  /** Pending deliveries are due and not leased. */
  has_due: boolean | number;
}

/**
 * Every enabled endpoint, of any account, with events to fan out or deliveries due: the worker's one look at the
 * whole queue. It walks the endpoints (few) and probes each through keys that lead with account_id.
 */
export async function endpointsWithWork(db: Executor, now: string): Promise<EndpointWithWork[]> {
  return db
    .selectFrom('webhook_endpoints as ep')
    .selectAll('ep')
    .select((eb) => {
      const events = eb.exists(
        eb
          .selectFrom('events as e')
          .select(sql.lit(1).as('one'))
          .whereRef('e.account_id', '=', 'ep.account_id')
          .whereRef('e.id', '>', 'ep.last_event_id'),
      );
      const due = eb.exists(
        eb
          .selectFrom('webhook_deliveries as d')
          .select(sql.lit(1).as('one'))
          .whereRef('d.account_id', '=', 'ep.account_id')
          .whereRef('d.endpoint_id', '=', 'ep.id')
          .where('d.status', '=', pending)
          .where('d.next_attempt_at', '<=', now)
          .where((w) => w.or([w('d.leased_until', 'is', null), w('d.leased_until', '<=', now)])),
      );
      return [events.as('has_events'), due.as('has_due')];
    })
    .where('ep.is_enabled', '=', true)
    .execute() as Promise<EndpointWithWork[]>;
}

/**
 * Claims up to `limit` due deliveries of one endpoint with no live lease (FOR UPDATE SKIP LOCKED on PostgreSQL, so
 * workers take different ones; SQLite runs it alone). The pick is a materialized CTE: as IN (subquery), PostgreSQL may
 * run it again for each row it updates, each run skipping the last one's locks, and so claim every due row.
 */
export async function claimDeliveries(
  tx: Executor,
  endpoint: { accountId: string; id: string },
  claim: { now: string; leasedUntil: string; token: string; limit: number },
): Promise<DeliveryRow[]> {
  const postgres = tx.getExecutor().adapter instanceof PostgresAdapter;
  return tx
    .with(
      (cte) => cte('picked').materialized(),
      (db) =>
        db
          .selectFrom('webhook_deliveries')
          .select('event_id')
          .where('account_id', '=', endpoint.accountId)
          .where('endpoint_id', '=', endpoint.id)
          .where('status', '=', pending)
          .where('next_attempt_at', '<=', claim.now)
          .where((w) => w.or([w('leased_until', 'is', null), w('leased_until', '<=', claim.now)]))
          .orderBy('next_attempt_at')
          .orderBy('event_id')
          .limit(claim.limit)
          .$if(postgres, (query) => query.forUpdate().skipLocked()),
    )
    .updateTable('webhook_deliveries')
    .set({ leased_until: claim.leasedUntil, lease_token: claim.token })
    .where('account_id', '=', endpoint.accountId)
    .where('endpoint_id', '=', endpoint.id)
    .where('event_id', 'in', (eb) => eb.selectFrom('picked').select('picked.event_id'))
    .returningAll()
    .execute();
}

/** Writes a delivery's state after an attempt, only while the lease is still the writer's. */
export async function finishAttempt(
  tx: Executor,
  key: DeliveryKey,
  token: string,
  fields: Pick<DeliveryRow, 'status' | 'attempts' | 'attempt_count' | 'next_attempt_at' | 'updated_at'>,
): Promise<boolean> {
  const result = await tx
    .updateTable('webhook_deliveries')
    .set({ ...fields, leased_until: null, lease_token: null })
    .where('account_id', '=', key.accountId)
    .where('endpoint_id', '=', key.endpointId)
    .where('event_id', '=', key.eventId)
    .where('lease_token', '=', token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives a claimed delivery back untried, for another worker to take at once. */
export async function releaseLease(db: Executor, key: DeliveryKey, token: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ leased_until: null, lease_token: null })
    .where('account_id', '=', key.accountId)
    .where('endpoint_id', '=', key.endpointId)
    .where('event_id', '=', key.eventId)
    .where('lease_token', '=', token)
    .execute();
}

export async function findDelivery(db: Executor, key: DeliveryKey): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where('endpoint_id', '=', key.endpointId)
    .where('event_id', '=', key.eventId)
    .executeTakeFirst();
}

export async function updateDelivery(
  db: Executor,
  key: DeliveryKey,
  fields: Updateable<WebhookDeliveriesTable>,
): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set(fields)
    .where('account_id', '=', key.accountId)
    .where('endpoint_id', '=', key.endpointId)
    .where('event_id', '=', key.eventId)
    .returningAll()
    .executeTakeFirst();
}

/** A page of an endpoint's deliveries, newest event first, before `beforeEventId` when given. */
export async function listDeliveries(
  db: Executor,
  endpoint: { accountId: string; id: string },
  page: { status: DeliveryRow['status'] | null; beforeEventId: string | null; limit: number },
): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('account_id', '=', endpoint.accountId)
    .where('endpoint_id', '=', endpoint.id)
    .$if(page.status !== null, (query) => query.where('status', '=', page.status as DeliveryRow['status']))
    .$if(page.beforeEventId !== null, (query) => query.where('event_id', '<', page.beforeEventId as string))
    .orderBy('event_id', 'desc')
    .limit(page.limit)
    .execute();
}

/** Deliveries waiting for a successful attempt, across accounts, to enabled endpoints. */
/** Pending deliveries on enabled endpoints, counted up to `atMost`: the scan of the partial index stops there. */
export async function countPendingDeliveries(db: Executor, atMost: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as ep', (join) =>
          join.onRef('ep.account_id', '=', 'd.account_id').onRef('ep.id', '=', 'd.endpoint_id'),
        )
        // A column of the index: the count reads the index alone.
        .select('d.endpoint_id')
        .where('d.status', '=', pending)
        .where('ep.is_enabled', '=', true)
        .limit(atMost)
        .as('waiting'),
    )
    .select((eb) => eb.fn.countAll().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Endpoints disabled for `reason`, counted up to `atMost`. */
export async function countDisabledEndpoints(
  db: Executor,
  reason: NonNullable<EndpointRow['disabled_reason']>,
  atMost: number,
): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('is_enabled', '=', false)
        .where('disabled_reason', '=', reason)
        .limit(atMost)
        .as('disabled'),
    )
    .select((eb) => eb.fn.countAll().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Endpoints of every account holding a secret stored unsealed, to seal once a key is configured. */
export async function listUnsealedEndpoints(db: Executor): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where((eb) => eb.or([eb('secret', 'like', 'plain.%'), eb('previous_secret', 'like', 'plain.%')]))
    .execute();
}
