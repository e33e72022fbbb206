import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

const requestIds = new AsyncLocalStorage<string>();

/**
 * Makes the request id known to whatever the handler calls, so a service recording events in its transaction
 * stamps them with it without every write's signature carrying it. Entered at preValidation, once the body has
 * been read: the body's stream callbacks would run outside a context entered earlier.
 */
export function carryRequestId(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => requestIds.run(request.id, done));
}

/** The id of the request being served; null outside one (the command line, background work). */
export function currentRequestId(): string | null {
  return requestIds.getStore() ?? null;
}
