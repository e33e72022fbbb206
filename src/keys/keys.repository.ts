import type { Executor } from '../db/database.ts';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string | null;
  readOnly: boolean;
  /** May approve and reject quotes (and write); never together with readOnly. */
  approver: boolean;
  createdAt: string;
  revokedAt: string | null;
}

function toRecord(row: {
  id: string;
  account_id: string;
  name: string | null;
  read_only: boolean | number;
  approver: boolean | number;
  created_at: string;
  revoked_at: string | null;
}): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    readOnly: Boolean(row.read_only),
    approver: Boolean(row.approver),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

const columns = ['id', 'account_id', 'name', 'read_only', 'approver', 'created_at', 'revoked_at'] as const;

export async function insertKey(db: Executor, key: ApiKeyRecord & { keyHash: string }): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      account_id: key.accountId,
      id: key.id,
      name: key.name,
      key_hash: key.keyHash,
      read_only: key.readOnly,
      approver: key.approver,
      created_at: key.createdAt,
      revoked_at: null,
    })
    .execute();
}

export async function findActiveKeyByHash(
  db: Executor,
  keyHash: string,
): Promise<(ApiKeyRecord & { keyHash: string }) | null> {
  const row = await db
    .selectFrom('api_keys')
    .select([...columns, 'key_hash'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? { ...toRecord(row), keyHash: row.key_hash } : null;
}

/** Whether the account's key `keyId` exists and is not revoked. */
export async function isKeyLive(db: Executor, accountId: string, keyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listKeys(db: Executor, accountId: string | null): Promise<ApiKeyRecord[]> {
  let query = db.selectFrom('api_keys').select(columns).orderBy('account_id').orderBy('id');
  if (accountId !== null) query = query.where('account_id', '=', accountId);
  return (await query.execute()).map(toRecord);
}

/** Operators revoke by key id alone, across accounts: the CLI is outside tenancy. */
export async function revokeKey(db: Executor, keyId: string, at: string): Promise<ApiKeyRecord | null> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  const row = await db.selectFrom('api_keys').select(columns).where('id', '=', keyId).executeTakeFirst();
  return row ? toRecord(row) : null;
}
