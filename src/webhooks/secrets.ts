import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Signing secrets (Standard Webhooks): sealed with AES-256-GCM under WEBHOOKS_SECRET_KEY, the endpoint's account and
 * id as associated data so a sealed value copied onto another endpoint does not open; without the key, stored `plain.`
 * with a warning at start, and sealed at the first start with it (docs/events-and-webhooks.md, "Secrets at rest").
 */

export type SecretKey = Buffer;

/** The 32-byte key WEBHOOKS_SECRET_KEY spells, as 64 hex digits or base64 (the config checks its form). */
export function secretKeyOf(text: string | null): SecretKey | null {
  if (text === null) return null;
  return Buffer.from(text, /^[0-9a-fA-F]{64}$/.test(text) ? 'hex' : 'base64');
}

/** A new signing secret in the Standard Webhooks form: whsec_ and base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const PLAIN = 'plain.';
const SEALED = 'v1.';

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED);
}

export function seal(
  secret: string,
  key: SecretKey | null,
  owner: { accountId: string; id: string },
): string {
  if (key === null) return `${PLAIN}${secret}`;
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(`${owner.accountId}/${owner.id}`));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED}${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
}

export class UnreadableSecretError extends Error {
  constructor() {
    super('the signing secret cannot be opened: WEBHOOKS_SECRET_KEY is unset or not the key that sealed it');
  }
}

export function open(
  stored: string,
  key: SecretKey | null,
  owner: { accountId: string; id: string },
): string {
  if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
  const [nonce, sealed] = stored.slice(SEALED.length).split('.');
  if (key === null || !isSealed(stored) || nonce === undefined || sealed === undefined) {
    throw new UnreadableSecretError();
  }
  const bytes = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(`${owner.accountId}/${owner.id}`));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new UnreadableSecretError();
  }
}

/**
 * The webhook-signature header of Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under each
 * secret (the bytes after whsec_), space-separated, so a receiver holding either secret of a rotation verifies it.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
