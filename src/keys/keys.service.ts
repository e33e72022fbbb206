import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { RecencyMap } from '../recency-map.ts';
import {
  type ApiKeyRecord,
  findActiveKeyByHash,
  insertKey,
  isKeyLive,
  listKeys,
  revokeKey,
} from './keys.repository.ts';

export const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
const accountIdPattern = new RegExp(ACCOUNT_ID_PATTERN);

export interface Account {
  id: string;
  keyId: string;
  readOnly: boolean;
  /** May approve and reject quotes (C19). Like readOnly, fixed when the key is made. */
  approver: boolean;
  /** The key's label, which a quote's approval history shows beside the key id. */
  keyName: string | null;
}

// Keys carry 256 random bits, so a plain SHA-256 is enough: no password-style stretching is needed to make a
// stolen hash useless, and lookup stays one indexed equality.
function hashKey(plaintext: string): string {
  return hash('sha256', plaintext);
}

export function isValidAccountId(accountId: string): boolean {
  return accountIdPattern.test(accountId);
}

export async function createKey(
  db: Db,
  input: { accountId: string; name: string | null; readOnly: boolean; approver?: boolean },
): Promise<{ key: ApiKeyRecord; plaintext: string }> {
  if (input.readOnly && input.approver) throw new RangeError('a read-only key cannot approve');
  const plaintext = `cpq_${randomBytes(32).toString('base64url')}`;
  const key: ApiKeyRecord = {
    id: newId('apiKey'),
    accountId: input.accountId,
    name: input.name,
    readOnly: input.readOnly,
    approver: input.approver ?? false,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await insertKey(db, { ...key, keyHash: hashKey(plaintext) });
  return { key, plaintext };
}

/** What a key may do, as `cpq keys list` shows it. */
export function keyPermission(key: ApiKeyRecord): 'read-only' | 'read-write' | 'approver' {
  if (key.readOnly) return 'read-only';
  return key.approver ? 'approver' : 'read-write';
}

export function listApiKeys(db: Db, accountId: string | null): Promise<ApiKeyRecord[]> {
  return listKeys(db, accountId);
}

export function revokeApiKey(db: Db, keyId: string): Promise<ApiKeyRecord | null> {
  return revokeKey(db, keyId, new Date().toISOString());
}

/**
 * A key answered from this process's memory of keys it has seen live (KnownKeys): the read that serves the request
 * confirms it is still live, in the same statement as its own stamp check (or with confirmKey when it has none), and
 * calls `confirm` with what it found.
 */
export interface UnconfirmedKey {
  readonly id: string;
  /** Settles the key: throws 401 unauthorized, and forgets the key, when it is no longer live. */
  confirm(live: boolean): void;
}

/** How many keys a process remembers; the least recently presented go first. */
const KNOWN_KEYS = 10_000;

/**
 * The keys this process has found live, by hash, so a route whose read confirms the key needs no lookup of its own
 * (UnconfirmedKey). Unknown keys are never kept, so each costs its lookup as always; of a key only revocation
 * changes, and every read sees that in the database.
 */
export class KnownKeys {
  readonly #byHash = new RecencyMap<Account>();

  /** The account of `presented` when this process has seen it live, unconfirmed. */
  recall(presented: string): { account: Account; keyHash: string } | undefined {
    if (!isWellFormed(presented)) return undefined;
    const keyHash = hashKey(presented);
    // Found by the whole hash: how long that takes tells of hashes, which no one can turn back into keys.
    const held = this.#byHash.get(keyHash);
    if (!held) return undefined;
    this.#byHash.touch(keyHash, held);
    return { account: held, keyHash };
  }

  remember(keyHash: string, account: Account): void {
    this.#byHash.set(keyHash, account);
    for (const oldest of this.#byHash.keys()) {
      if (this.#byHash.size <= KNOWN_KEYS) break;
      this.#byHash.delete(oldest);
    }
  }

  forget(keyHash: string): void {
    this.#byHash.delete(keyHash);
  }
}

function isWellFormed(presented: string): boolean {
  return presented.startsWith('cpq_') && presented.length <= 200;
}

/** Resolves a presented key to its account, or null; a key found live is remembered in `known`. */
export async function authenticate(db: Db, presented: string, known: KnownKeys): Promise<Account | null> {
  if (!isWellFormed(presented)) return null;
  const keyHash = hashKey(presented);
  const found = await findActiveKeyByHash(db, keyHash);
  // The index finds the row by hash; comparing the hashes again in constant time keeps any later change to the
  // lookup (a cache, a prefix index) from turning into a timing oracle.
  if (!found || !timingSafeEqual(Buffer.from(found.keyHash), Buffer.from(keyHash))) {
    known.forget(keyHash);
    return null;
  }
  const account: Account = {
    id: found.accountId,
    keyId: found.id,
    readOnly: found.readOnly,
    approver: found.approver,
    keyName: found.name,
  };
  known.remember(keyHash, account);
  return account;
}

/** Confirms an unconfirmed key of the account with a lookup of its own, for a read that does not confirm it. */
export async function confirmKey(db: Db, accountId: string, key: UnconfirmedKey | null): Promise<void> {
  if (key !== null) key.confirm(await isKeyLive(db, accountId, key.id));
}
