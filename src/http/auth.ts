import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.ts';
import { type Account, authenticate } from '../keys/keys.service.ts';
import { AppError } from '../problems.ts';

declare module 'fastify' {
  interface FastifyRequest {
    account: Account;
  }
  interface FastifyContextConfig {
    /** A POST that only reads (pricing a quote) and so is open to read-only keys. */
    readOnlyAllowed?: boolean;
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

/**
 * Every /v1 route needs a key; the key's account scopes everything after. The hook sits on the root and decides
 * by the route's URL, so a /v1 route is guarded wherever in the plugin tree it was registered.
 */
export function requireApiKey(app: FastifyInstance, db: Db): void {
  app.decorateRequest('account', null as unknown as Account);
  app.addHook('onRequest', async (request) => {
    if (!isApiRoute(request.routeOptions.url)) return;
    const presented = request.headers['x-api-key'];
    if (typeof presented !== 'string' || presented === '') {
      throw new AppError('unauthorized', 'Send an API key in the x-api-key header');
    }
    const account = await authenticate(db, presented);
    if (!account) throw new AppError('unauthorized', 'The API key is not known or has been revoked');
    if (account.readOnly && needsWriteAccess(request.method, request.routeOptions.config)) {
      throw new AppError('forbidden', 'This API key is read-only');
    }
    request.account = account;
  });
}
