import { PostgresAdapter, type Selectable, sql } from 'kysely';
import type { EventsTable, Executor } from '../db/database.ts';

export type EventRow = Selectable<EventsTable>;

// The class of the account's event lock (its second key is the account's hash); this constant spells "evts".
const eventOrderLock = 0x65767473;

const onPostgres = (db: Executor) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * A writer's turn to record the account's events, and the account's newest event id ('' for none) for its ids to
 * follow. Writers hold the account's event lock shared until they commit (PostgreSQL; SQLite runs one write at a
 * time), so they never wait on each other; readers take it whole (awaitEventWriters). Taken last in a write.
 */
export async function takeEventTurn(tx: Executor, accountId: string): Promise<string> {
  if (onPostgres(tx)) {
    await sql`select pg_advisory_xact_lock_shared(${eventOrderLock}, hashtext(${accountId}))`.execute(tx);
  }
  return newestEventId(tx, accountId);
}

/**
 * Waits until no write recording the account's events is in flight, and holds new ones off until `tx` ends
 * (PostgreSQL): the account's events read after it have no gap that a later commit could fill with a smaller id.
 * Taken after the transaction's row locks, as writers take their turn.
 */
export async function awaitEventWriters(tx: Executor, accountId: string): Promise<void> {
  if (onPostgres(tx)) {
    await sql`select pg_advisory_xact_lock(${eventOrderLock}, hashtext(${accountId}))`.execute(tx);
  }
}

export async function insertEvents(tx: Executor, rows: EventRow[]): Promise<void> {
  await tx.insertInto('events').values(rows).execute();
}

export async function findEvent(db: Executor, accountId: string, id: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A page of the account's events after `afterId` in the order asked for, keyed by id as the primary key is. */
export async function listEventsAfter(
  db: Executor,
  accountId: string,
  page: { afterId: string | null; types: string[] | null; newestFirst: boolean; limit: number },
): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('account_id', '=', accountId);
  if (page.types !== null) query = query.where('type', 'in', page.types);
  if (page.afterId !== null) query = query.where('id', page.newestFirst ? '<' : '>', page.afterId);
  return query
    .orderBy('id', page.newestFirst ? 'desc' : 'asc')
    .limit(page.limit)
    .execute();
}

/**
 * Deletes up to `batch` events older than `beforeId` (ids sort by time), oldest first, across accounts: retention
 * is the operator's, not a tenant's. Answers how many went.
 */
export async function purgeEventsBefore(db: Executor, beforeId: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb.selectFrom('events').select('id').where('id', '<', beforeId).orderBy('id').limit(batch),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function findEvents(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('events')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}

/** The account's newest event id, or '' when it has none ('' sorts before every id). */
export async function newestEventId(db: Executor, accountId: string): Promise<string> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? '';
}

/** The ids of up to `limit` events of the account after `afterId`, oldest first. */
export async function eventIdsAfter(
  db: Executor,
  accountId: string,
  afterId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('events')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}
