import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export type Coding = 'br' | 'gzip';

/** Smaller answers go out as they are: compressing them saves less than it costs either side. */
export const minCompressedBytes = 1024;

/** How hard to compress: `once` for bytes kept and served many times, `each` for an answer compressed as it goes. */
export type Effort = 'once' | 'each';
const levels = { once: { br: 6, gzip: 9 }, each: { br: 4, gzip: 1 } } as const;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

function brotliOptions(effort: Effort, sizeHint = 0): zlib.BrotliOptions {
  return {
    params: {
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_QUALITY]: levels[effort].br,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint,
    },
  };
}

/**
 * An answer compressed for its request (`each`) under this size is compressed at once on the event loop: handing it
 * to libuv's thread pool costs several times the CPU of compressing it, which holds the loop under a millisecond.
 */
const pooledFromBytes = 32 * 1024;

/** The bytes in `coding`: a small answer for its request at once, anything else on libuv's thread pool. */
export async function compress(bytes: Buffer | string, coding: Coding, effort: Effort): Promise<Buffer> {
  const size = Buffer.byteLength(bytes);
  const atOnce = effort === 'each' && size < pooledFromBytes;
  if (coding === 'gzip') {
    const options = { level: levels[effort].gzip };
    return atOnce ? zlib.gzipSync(bytes, options) : gzip(bytes, options);
  }
  const options = brotliOptions(effort, size);
  return atOnce ? zlib.brotliCompressSync(bytes, options) : brotli(bytes, options);
}

/** A stream that compresses into `coding` what is written to it, on libuv's thread pool, as it comes. */
export function compressor(coding: Coding, effort: Effort): Transform {
  if (coding === 'gzip') return zlib.createGzip({ level: levels[effort].gzip });
  return zlib.createBrotliCompress(brotliOptions(effort));
}

/** Bytes given in parts, compressed as one: a single part at once, several through a stream, none copied. */
export async function compressParts(parts: Buffer[], coding: Coding, effort: Effort): Promise<Buffer[]> {
  const [only] = parts;
  if (parts.length === 1 && only) return [await compress(only, coding, effort)];
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(parts, { objectMode: false }),
    compressor(coding, effort),
    async (compressed) => {
      for await (const chunk of compressed) out.push(chunk as Buffer);
    },
  );
  return out;
}

/** The compressed forms of an answer kept for many requests, each made once, when first asked for. */
export type EncodedForms = Partial<Record<Coding, Promise<Buffer[]>>>;

/**
 * A kept answer's parts in `coding`, compressed once: the first request makes them (the others wait for the same)
 * and `made` is told their size, for a cache to count. A failure is not kept.
 */
export function encodedOnce(
  kept: { parts: Buffer[]; encoded?: EncodedForms },
  coding: Coding,
  made: (bytes: number) => void,
): Promise<Buffer[]> {
  kept.encoded ??= {};
  const forms = kept.encoded;
  const known = forms[coding];
  if (known) return known;
  const making = compressParts(kept.parts, coding, 'once').then(
    (parts) => {
      made(parts.reduce((sum, part) => sum + part.byteLength, 0));
      return parts;
    },
    (error: unknown) => {
      delete forms[coding];
      throw error;
    },
  );
  forms[coding] = making;
  return making;
}
