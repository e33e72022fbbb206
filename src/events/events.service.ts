import type { Db, Executor } from '../db/database.ts';
import { currentRequestId } from '../http/request-context.ts';
import { firstIdAt, newIdAfter } from '../ids.ts';
import { invalid, notFound } from '../problems.ts';
import {
  type EventRow,
  findEvent,
  insertEvents,
  listEventsAfter,
  purgeEventsBefore,
  takeEventTurn,
} from './events.repository.ts';
import { type Event, type EventListQuery, type EventType, eventTypes } from './events.schemas.ts';

export interface NewEvent {
  type: EventType;
  object: unknown;
}

/**
 * Records the events of a write in the write's own transaction, so they commit with it or not at all (the
 * outbox). Call it last in the transaction: it takes the turn that orders event ids (takeEventTurn).
 */
export async function recordEvents(tx: Executor, accountId: string, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  let previous = await takeEventTurn(tx);
  const createdAt = new Date().toISOString();
  const requestId = currentRequestId();
  const rows: EventRow[] = events.map(({ type, object }) => {
    previous = newIdAfter('event', previous);
    return {
      account_id: accountId,
      id: previous,
      type,
      created_at: createdAt,
      request_id: requestId,
      data: JSON.stringify({ object }),
    };
  });
  await insertEvents(tx, rows);
}

export function recordEvent(
  tx: Executor,
  accountId: string,
  type: EventType,
  object: unknown,
): Promise<void> {
  return recordEvents(tx, accountId, [{ type, object }]);
}

export function toEvent(row: EventRow): Event {
  return {
    id: row.id,
    type: row.type as EventType,
    accountId: row.account_id,
    createdAt: row.created_at,
    requestId: row.request_id,
    data: JSON.parse(row.data),
  };
}

const knownTypes = new Set<string>(eventTypes);

function parseTypes(types: string | undefined): string[] | null {
  if (types === undefined) return null;
  const list = [...new Set(types.split(',').map((t) => t.trim()))];
  const unknown = list.filter((t) => !knownTypes.has(t));
  if (unknown.length > 0) {
    throw invalid('validation_failed', [
      {
        code: 'invalid_event_type',
        in: 'query',
        pointer: '/types',
        message: `${unknown.join(', ')} ${unknown.length === 1 ? 'is not an event type' : 'are not event types'}`,
      },
    ]);
  }
  return list;
}

export async function listEvents(
  db: Db,
  accountId: string,
  query: EventListQuery,
): Promise<{ events: Event[]; nextKey?: string }> {
  const limit = query.limit ?? 25;
  const rows = await listEventsAfter(db, accountId, {
    afterId: query.after ?? null,
    types: parseTypes(query.types),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const events = page.map(toEvent);
  const last = page.at(-1);
  return rows.length > limit && last ? { events, nextKey: last.id } : { events };
}

export async function getEvent(db: Db, accountId: string, eventId: string): Promise<Event> {
  const row = await findEvent(db, accountId, eventId);
  if (!row) throw notFound('Event', eventId);
  return toEvent(row);
}

/** Events removed per statement: short transactions that never hold the table long. */
export const PURGE_BATCH = 1000;

/** Deletes the events older than the retention, a batch at a time; answers how many went. */
export async function purgeExpiredEvents(db: Db, retentionDays: number, now = Date.now()): Promise<number> {
  const before = firstIdAt('event', now - retentionDays * 24 * 60 * 60 * 1000);
  let total = 0;
  for (;;) {
    const purged = await purgeEventsBefore(db, before, PURGE_BATCH);
    total += purged;
    if (purged < PURGE_BATCH) return total;
  }
}

const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * Purges expired events at start and then every hour, until the returned stop is called; stop waits for a purge
 * under way. A failed purge (the database away) is reported and tried again at the next turn.
 */
export function scheduleEventPurge(
  db: Db,
  retentionDays: number,
  onError: (error: unknown) => void,
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const purge = () => {
    running = purgeExpiredEvents(db, retentionDays).catch(onError);
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
