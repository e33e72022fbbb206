import type { Db } from '../db/database.ts';
import { firstIdAt } from '../ids.ts';
import { invalid, notFound } from '../problems.ts';
import { repeatEvery } from '../shared/repeat.ts';
import type { RequestScope } from '../shared/scope.ts';
import {
  awaitEventWriters,
  type EventRow,
  findEvent,
  listEventsAfter,
  purgeEventsBefore,
} from './events.repository.ts';
import { type Event, type EventListQuery, type EventType, eventTypes } from './events.schemas.ts';

export function toEvent(row: EventRow): Event {
  return {
    id: row.id,
    type: row.type as EventType,
    accountId: row.account_id,
    createdAt: row.created_at,
    requestId: row.request_id,
    keyId: row.key_id,
    keyName: row.key_name,
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
  scope: RequestScope,
  query: EventListQuery,
): Promise<{ events: Event[]; nextKey?: string }> {
  const { db } = scope;
  const accountId = scope.account.id;
  const limit = query.limit ?? 25;
  const types = parseTypes(query.types);
  const rows = await db
    .transaction()
    .setAccessMode('read only')
    .execute(async (tx) => {
      await awaitEventWriters(tx, accountId);
      return listEventsAfter(tx, accountId, {
        afterId: query.after ?? null,
        types,
        newestFirst: query.order === 'desc',
        limit: limit + 1,
      });
    });
  const page = rows.slice(0, limit);
  const events = page.map(toEvent);
  const last = page.at(-1);
  return rows.length > limit && last ? { events, nextKey: last.id } : { events };
}

export async function getEvent(scope: RequestScope, eventId: string): Promise<Event> {
  const { db } = scope;
  const accountId = scope.account.id;
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
  return repeatEvery(PURGE_EVERY_MS, () => purgeExpiredEvents(db, retentionDays), onError);
}
