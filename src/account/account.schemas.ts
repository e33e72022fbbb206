import { Type } from 'typebox';
import { component } from '../components.ts';

export const CurrentKey = component(
  'CurrentKey',
  Type.Object({
    keyId: Type.String({ description: 'The id of the API key the request was made with (key_...)' }),
    accountId: Type.String({ description: 'The account the key belongs to' }),
    readOnly: Type.Boolean({
      description: 'True for a read-only key: every operation whose security names readWrite answers 403',
    }),
    approver: Type.Boolean({
      description: 'True for an approver key (cpq keys create --approver): it may approve and reject quotes',
    }),
  }),
);
