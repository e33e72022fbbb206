import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { type Account, authenticate, KnownKeys } from '../keys/keys.service.ts';
import { AppError } from '../problems.ts';
import { confirmScopeKey, type Limits, makeScope, type RequestScope } from '../shared/scope.ts';
import { routeOf } from './route-of.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Built once the key is admitted; null on routes that need no key. Services take it first. */
    scope: RequestScope;
  }
  interface FastifyContextConfig {
    /** A POST that only reads (pricing a quote) and so is open to read-only keys. */
    readOnlyAllowed?: boolean;
    /**
     * Only an approver key may call the route (C19): its OpenAPI security names the role `approve`. The service
     * refuses other keys, once it has found the record, so another account's ids stay 404.
     */
    approverOnly?: boolean;
    /**
     * The route hands `request.scope` (its key check) to a read that confirms it in its own statement (throughStamps), so
     * a key this process remembers needs no lookup first: a warm read is one statement.
     */
    keyConfirmedByRead?: boolean;
  }
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a read-only key is refused: every write, except a route marked readOnlyAllowed (it only reads). */
export function needsWriteAccess(method: string, config: { readOnlyAllowed?: boolean } | undefined): boolean {
  return !readMethods.has(method) && config?.readOnlyAllowed !== true;
}

/** Whether a route is an API route, and so needs a key. */
export function isApiRoute(url: string | undefined): boolean {
  return url !== undefined && (url === '/v1' || url.startsWith('/v1/'));
}

const unknownKey = () => new AppError('unauthorized', 'The API key is not known or has been revoked');

/** Whether a read-only key is refused on the request's route. */
function refusal(request: FastifyRequest, account: Account): AppError | undefined {
  return account.readOnly && needsWriteAccess(request.method, routeOf(request).config)
    ? new AppError('forbidden', 'This API key is read-only')
    : undefined;
}

/**
 * Every /v1 route needs a key, whose account scopes everything after; the root's hook decides by URL, wherever the
 * route was registered. A key this process found live goes on unconfirmed to a keyConfirmedByRead route, whose read
 * confirms it, so a revocation anywhere is refused at once (docs/api.md, "Keys and accounts").
 */
export function requireApiKey(app: FastifyInstance, { db, limits }: { db: Db; limits: Limits }): void {
  const known = new KnownKeys();
  app.decorateRequest('scope', null as unknown as RequestScope);
  /** Scopes the request to the key's account, unless the key is read-only and the route writes. */
  const admitted = (request: FastifyRequest, account: Account, keyHash: string | null) => {
    const refused = refusal(request, account);
    if (refused) return refused;
    const scope = makeScope({ db, account, limits, requestId: request.id });
    if (keyHash !== null) {
      scope.key = {
        id: account.keyId,
        confirm: (live) => {
          scope.key = null;
          if (live) return;
          known.forget(keyHash);
          throw unknownKey();
        },
      };
    }
    request.scope = scope;
    return undefined;
  };
  // A callback hook: a key this process remembers is settled without waiting for anything, and an async hook would
  // cost every request a promise and a turn of the microtask queue.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isApiRoute(routeOf(request).url)) return done();
    const presented = request.headers['x-api-key'];
    if (typeof presented !== 'string' || presented === '') {
      return done(new AppError('unauthorized', 'Send an API key in the x-api-key header'));
    }
    const recalled =
      routeOf(request).config.keyConfirmedByRead === true ? known.recall(presented) : undefined;
    if (recalled) return done(admitted(request, recalled.account, recalled.keyHash));
    authenticate(db, presented, known).then(
      (account) => done(account ? admitted(request, account, null) : unknownKey()),
      done,
    );
  });
  // What makes keyConfirmedByRead safe whatever a route does: no answer but an error goes out on a key no read
  // confirmed. Registered before the hooks that store or shorten an answer (idempotency, conditional requests).
  // A callback hook: an answer whose key the route's read confirmed, or a refusal, goes on at once.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 || request.scope === null || request.scope.key === null) {
      return done(null, payload);
    }
    confirmScopeKey(request.scope).then(() => done(null, payload), done);
  });
}
