import type { Executor } from '../db/database.ts';
import { newIdAfter } from '../ids.ts';
import { OUTSIDE_HTTP_KEY_ID, type RequestScope } from '../shared/scope.ts';
import { type EventRow, insertEvents, takeEventTurn } from './events.repository.ts';
import type { EventType } from './events.schemas.ts';

/** An event's object already serialized, for a write that holds its record as JSON text. */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export interface NewEvent {
  type: EventType;
  object: unknown;
}

/**
 * Records the events of a write in the write's own transaction `tx`, so they commit with it or not at all, stamped
 * with the scope's account, request id and key. Call it last in the transaction: it takes the turn that orders event ids.
 */
export async function recordEvents(scope: RequestScope, tx: Executor, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  let previous = await takeEventTurn(tx, scope.account.id);
  const createdAt = scope.now().toISOString();
  const { keyId, keyName } = scope.account;
  const byKey = keyId !== OUTSIDE_HTTP_KEY_ID;
  const rows: EventRow[] = events.map(({ type, object }) => {
    previous = newIdAfter('event', previous);
    return {
      account_id: scope.account.id,
      id: previous,
      type,
      created_at: createdAt,
      request_id: scope.requestId,
      data: object instanceof JsonText ? `{"object":${object.text}}` : JSON.stringify({ object }),
      key_id: byKey ? keyId : null,
      key_name: byKey ? keyName : null,
    };
  });
  await insertEvents(tx, rows);
}

export function recordEvent(
  scope: RequestScope,
  tx: Executor,
  type: EventType,
  object: unknown,
): Promise<void> {
  return recordEvents(scope, tx, [{ type, object }]);
}
