import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { type ApiKeyRecord, findActiveKeyByHash, insertKey, listKeys, revokeKey } from './keys.repository.ts';

export const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
const accountIdPattern = new RegExp(ACCOUNT_ID_PATTERN);

export interface Account {
  id: string;
  keyId: string;
  readOnly: boolean;
}

// Keys carry 256 random bits, so a plain SHA-256 is enough: no password-style stretching is needed to make a
// stolen hash useless, and lookup stays one indexed equality.
function hashKey(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

export function isValidAccountId(accountId: string): boolean {
  return accountIdPattern.test(accountId);
}

export async function createKey(
  db: Db,
  input: { accountId: string; name: string | null; readOnly: boolean },
): Promise<{ key: ApiKeyRecord; plaintext: string }> {
  const plaintext = `cpq_${randomBytes(32).toString('base64url')}`;
  const key: ApiKeyRecord = {
    id: newId('apiKey'),
    accountId: input.accountId,
    name: input.name,
    readOnly: input.readOnly,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await insertKey(db, { ...key, keyHash: hashKey(plaintext) });
  return { key, plaintext };
}

export function listApiKeys(db: Db, accountId: string | null): Promise<ApiKeyRecord[]> {
  return listKeys(db, accountId);
}

export function revokeApiKey(db: Db, keyId: string): Promise<ApiKeyRecord | null> {
  return revokeKey(db, keyId, new Date().toISOString());
}

/** Resolves a presented key to its account, or null. */
export async function authenticate(db: Db, presented: string): Promise<Account | null> {
  if (!presented.startsWith('cpq_') || presented.length > 200) return null;
  const keyHash = hashKey(presented);
  const found = await findActiveKeyByHash(db, keyHash);
  // The index finds the row by hash; comparing the hashes again in constant time keeps any later change to the
  // lookup (a cache, a prefix index) from turning into a timing oracle.
  if (!found || !timingSafeEqual(Buffer.from(found.keyHash), Buffer.from(keyHash))) return null;
  return { id: found.accountId, keyId: found.id, readOnly: found.readOnly };
}
