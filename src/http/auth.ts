import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.ts';
import { type Account, authenticate } from '../keys/keys.service.ts';
import { AppError } from './errors.ts';

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

/** Every route registered in this scope needs a key; the key's account scopes everything after. */
export function requireApiKey(scope: FastifyInstance, db: Db): void {
  scope.decorateRequest('account', null as unknown as Account);
  scope.addHook('onRequest', async (request) => {
    const presented = request.headers['x-api-key'];
    if (typeof presented !== 'string' || presented === '') {
      throw new AppError('unauthorized', 'Send an API key in the x-api-key header');
    }
    const account = await authenticate(db, presented);
    if (!account) throw new AppError('unauthorized', 'The API key is not known or has been revoked');
    if (
      account.readOnly &&
      !readMethods.has(request.method) &&
      !request.routeOptions.config.readOnlyAllowed
    ) {
      throw new AppError('forbidden', 'This API key is read-only');
    }
    request.account = account;
  });
}
