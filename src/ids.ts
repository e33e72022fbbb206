import { randomFillSync, randomInt } from 'node:crypto';

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

/** The largest step successor takes (randomInt's widest range), small beside the 2^80 of a random part. */
const MAX_STEP = 2 ** 48 - 1;

/**
 * An id after `id` in sort order: its random part raised by a random step, so ids that two writers make after the
 * same id (each in its own transaction) differ.
 */
function successor(id: string): string {
  const cut = id.length - RANDOM_CHARS;
  let random = 0n;
  for (const char of id.slice(cut)) random = random * 32n + BigInt(ALPHABET.indexOf(char));
  random += 1n + BigInt(randomInt(MAX_STEP));
  if (random >= 32n ** BigInt(RANDOM_CHARS)) throw new Error(`no id follows ${id}`);
  const chars = Array.from({ length: RANDOM_CHARS }, (_, i) =>
    ALPHABET.charAt(Number((random >> BigInt(5 * (RANDOM_CHARS - 1 - i))) & 31n)),
  );
  return `${id.slice(0, cut)}${chars.join('')}`;
}

/**
 * A new id that sorts after `previous` (the newest a writer can see) even when another process's clock is ahead of
 * ours: what readers have seen, a writer's ids follow.
 */
export function newIdAfter(kind: IdKind, previous: string | undefined): string {
  const id = newId(kind);
  return previous === undefined || id > previous ? id : successor(previous);
}

/** The smallest id of the kind made at `time` (ms): every id made earlier sorts before it. */
export function firstIdAt(kind: IdKind, time: number): string {
  return `${idPrefixes[kind]}_${encodeTime(time)}${'0'.repeat(16)}`;
}
