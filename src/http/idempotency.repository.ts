import type { Db, IdempotencyKeysTable } from '../db/database.ts';

const PURGE_BATCH = 100;

interface KeyOf {
  accountId: string;
  key: string;
}

/** A claim's fields: who holds it (claim_token), for which request, until when; no answer yet. */
export type Claim = Omit<IdempotencyKeysTable, 'account_id' | 'key'>;

/** Inserts the claim unless the account already has the key; says whether it did. */
export async function insertClaim(db: Db, at: KeyOf, claim: Claim): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({ account_id: at.accountId, key: at.key, ...claim })
    .onConflict((c) => c.columns(['account_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows) === 1;
}

export async function findKey(db: Db, at: KeyOf): Promise<IdempotencyKeysTable | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', at.accountId)
    .where('key', '=', at.key)
    .executeTakeFirst();
}

/**
 * Replaces the record held by `heldBy` with a new claim, if at `now` it has expired or is a claim whose lease has
 * lapsed; says whether it did. The conditions are checked in the update itself, so of two requests taking over,
 * one wins.
 */
export async function takeOver(
  db: Db,
  at: KeyOf,
  heldBy: string,
  claim: Claim,
  now: string,
): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set(claim)
    .where('account_id', '=', at.accountId)
    .where('key', '=', at.key)
    .where('claim_token', '=', heldBy)
    .where((eb) =>
      eb.or([eb('expires_at', '<=', now), eb.and([eb('status', 'is', null), eb('locked_until', '<=', now)])]),
    )
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Deletes a batch of the account's records expired at `now`: each new key pays for clearing up to 100 old ones. */
export async function purgeExpired(db: Db, accountId: string, now: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', accountId)
    // Repeated outside the subquery: PostgreSQL checks it again on a row taken over meanwhile, and keeps it.
    .where('expires_at', '<=', now)
    .where(
      'key',
      'in',
      db
        .selectFrom('idempotency_keys')
        .select('key')
        .where('account_id', '=', accountId)
        .where('expires_at', '<=', now)
        .limit(PURGE_BATCH),
    )
    .execute();
}

/** Stores the answer on the claim `token` still holds; says whether it still held it. */
export async function storeAnswer(
  db: Db,
  at: KeyOf,
  token: string,
  answer: Pick<IdempotencyKeysTable, 'status' | 'response_headers' | 'response_body'>,
): Promise<boolean> {
  const stored = await db
    .updateTable('idempotency_keys')
    .set({ ...answer, locked_until: null })
    .where('account_id', '=', at.accountId)
    .where('key', '=', at.key)
    .where('claim_token', '=', token)
    .executeTakeFirst();
  return Number(stored.numUpdatedRows) > 0;
}

/** Deletes the claim `token` holds, if it still holds it. */
export async function releaseClaim(db: Db, at: KeyOf, token: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', at.accountId)
    .where('key', '=', at.key)
    .where('claim_token', '=', token)
    .execute();
}
