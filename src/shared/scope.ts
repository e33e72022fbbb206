import { type Config, loadConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { type Account, confirmKey, type UnconfirmedKey } from '../keys/keys.service.ts';
import { AnswerGate } from './heavy-answers.ts';

/**
 * The request's key while this process's memory of it is unconfirmed: the read that serves the request confirms it
 * (or confirmKey does). Null when the key was looked up, or once confirmed.
 */
export type KeyCheck = UnconfirmedKey | null;

/** What building answers is held to, the same for every request of a process. */
export interface Limits {
  /** Heavy answers (bundle details, quote catalogues) wait their turn here. */
  readonly gate: AnswerGate;
  readonly answerMaxBytes: number;
  readonly configureMaxSteps: number;
  readonly configureAnswersKept: number;
}

/** Everything a service needs to know of who asks and under what limits; services take `(scope, input)`. */
export interface RequestScope {
  readonly db: Db;
  readonly account: Account;
  readonly key: KeyCheck;
  readonly limits: Limits;
  /** Stamped on the events a write records; null outside a request (the command line, background work). */
  readonly requestId: string | null;
  readonly now: () => Date;
}

/** A scope whose key check the request's hooks settle: `key` turns null once confirmed. */
export type SettledScope = { -readonly [K in keyof RequestScope]: RequestScope[K] };

const systemClock = (): Date => new Date();

export function limitsOf(config: Config, gate?: AnswerGate): Limits {
  return {
    gate: gate ?? new AnswerGate(config.heavyAnswersAtOnce, config.heavyAnswersQueued),
    answerMaxBytes: config.answerMaxBytes,
    configureMaxSteps: config.configureMaxSteps,
    configureAnswersKept: config.configureAnswersKept,
  };
}

/** A scope, for a request's hook to fill or for work outside HTTP that acts with a key's account. */
export function makeScope(parts: {
  db: Db;
  account: Account;
  /** Defaults to the configuration's defaults, for work that builds no heavy answer. */
  limits?: Limits;
  key?: KeyCheck;
  requestId?: string | null;
  now?: () => Date;
}): SettledScope {
  return {
    db: parts.db,
    account: parts.account,
    key: parts.key ?? null,
    limits: parts.limits ?? limitsOf(loadConfig({})),
    requestId: parts.requestId ?? null,
    now: parts.now ?? systemClock,
  };
}

/** Confirms the scope's key with a lookup of its own, for a read that does not confirm it in its own statement. */
export function confirmScopeKey(scope: RequestScope): Promise<void> {
  return confirmKey(scope.db, scope.account.id, scope.key);
}

/** The key id of a scope outside HTTP: no key of the account's presented it. */
export const OUTSIDE_HTTP_KEY_ID = 'outside-http';

/** A scope for work outside HTTP (the command line, tests, background work): no key presented it. */
export function scopeOutsideHttp(db: Db, accountId: string, limits?: Limits): RequestScope {
  return makeScope({
    db,
    account: { id: accountId, keyId: OUTSIDE_HTTP_KEY_ID, readOnly: false, approver: false, keyName: null },
    limits,
  });
}
