import type { Db } from '../db/database.ts';
import type { Account } from '../keys/keys.service.ts';

/**
 * The part of a request's scope the approval services use, under the names of RequestScope (src/shared/scope.ts,
 * issue 47), which takes its place once that lands.
 */
export interface Scope {
  readonly db: Db;
  readonly account: Account;
  readonly now: () => Date;
}
