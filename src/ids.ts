import { randomFillSync } from 'node:crypto';

// Crockford base32: URL-safe, case-insensitive to read, and lexical order equals time order.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const idPrefixes = {
  bundle: 'bnd',
  option: 'opt',
  optionProduct: 'opp',
  priceBook: 'pb',
  rule: 'rul',
  apiKey: 'key',
  request: 'req',
  event: 'evt',
  webhookEndpoint: 'whe',
  quote: 'quo',
  approvalPolicy: 'apl',
} as const;

export type IdKind = keyof typeof idPrefixes;

let lastTime = 0;
let lastRandom: Uint8Array = new Uint8Array(10);

// Every request draws an id, so its random part is sliced from a pool that one call into the system's generator
// fills, not drawn by a call of its own. The slice is a copy, so a refill never changes an id's random part while
// later ids of the same millisecond increment it.
const randomPool = new Uint8Array(4096);
let randomPoolUsed = randomPool.length;

function drawRandom(length: number): Uint8Array {
  if (randomPoolUsed + length > randomPool.length) {
    randomFillSync(randomPool);
    randomPoolUsed = 0;
  }
  randomPoolUsed += length;
  return randomPool.slice(randomPoolUsed - length, randomPoolUsed);
}

// An id is written into this buffer and read out as one string: built a character at a time, it made short-lived
// strings and a typed array on every request.
const alphabetCodes = Buffer.from(ALPHABET, 'latin1');
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const idChars = Buffer.alloc(TIME_CHARS + RANDOM_CHARS);

function writeTime(time: number): void {
  let rest = time;
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    idChars[i] = alphabetCodes[rest % 32] as number;
    rest = Math.floor(rest / 32);
  }
}

function writeRandom(bytes: Uint8Array): void {
  let at = TIME_CHARS;
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      idChars[at++] = alphabetCodes[(value >> bits) & 31] as number;
    }
  }
}

function encodeTime(time: number): string {
  writeTime(time);
  return idChars.toString('latin1', 0, TIME_CHARS);
}

/** Adds one to `bytes`, a big-endian number, in place; all ones wrap to zero. */
function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    const byte = bytes[i] as number;
    if (byte < 255) {
      bytes[i] = byte + 1;
      return;
    }
    bytes[i] = 0;
  }
}

/**
 * A ULID with a type prefix. Within one millisecond the random part is incremented rather than redrawn,
 * so ids made by one process sort in creation order, which keyset pagination relies on.
 */
export function newId(kind: IdKind): string {
  const now = Date.now();
  if (now <= lastTime) {
    // lastRandom is this module's own copy (drawRandom slices the pool), and the ids made from it are strings.
    increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = drawRandom(10);
  }
  writeTime(lastTime);
  writeRandom(lastRandom);
  return `${idPrefixes[kind]}_${idChars.toString('latin1')}`;
}

/** The next id in sort order after `id`: its last character incremented, carrying. */
function successor(id: string): string {
  const chars = id.split('');
  for (let i = chars.length - 1; i > 0 && chars[i] !== '_'; i--) {
    const digit = ALPHABET.indexOf(chars[i] as string);
    if (digit < 31) {
      chars[i] = ALPHABET[digit + 1] as string;
      return chars.join('');
    }
    chars[i] = '0';
  }
  throw new Error(`no id follows ${id}`);
}

/**
 * A new id that sorts after `previous` even when another process's clock is ahead of ours, so ids handed out in
 * turn (under a lock) ascend in that turn's order.
 */
export function newIdAfter(kind: IdKind, previous: string | undefined): string {
  const id = newId(kind);
  return previous === undefined || id > previous ? id : successor(previous);
}

/** The smallest id of the kind made at `time` (ms): every id made earlier sorts before it. */
export function firstIdAt(kind: IdKind, time: number): string {
  return `${idPrefixes[kind]}_${encodeTime(time)}${'0'.repeat(16)}`;
}
