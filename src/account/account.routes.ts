import { Type } from 'typebox';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { CurrentKey } from './account.schemas.ts';

const tags = tag('keys', 'The API key a request is made with, so that a client can tell what it may do');

export const accountRoutes: Routes = async (app) => {
  app.get(
    '/keys/current',
    {
      schema: {
        operationId: 'getCurrentKey',
        summary:
          'Describe the key making the request: its id, its account, and whether it is read-only or an approver',
        description:
          'Open to every valid key. A client (the console) reads `readOnly` to offer no edit a key may not make. ' +
          'The key itself is never echoed: keys are shown only once, by `cpq keys create`.',
        tags,
        response: { 200: Type.With(CurrentKey, { description: 'The key making the request' }) },
      },
    },
    async (request) => ({
      keyId: request.scope.account.keyId,
      accountId: request.scope.account.id,
      readOnly: request.scope.account.readOnly,
      approver: request.scope.account.approver,
    }),
  );
};
