import { once } from 'node:events';
import { Readable, type Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Stamped } from '../catalogue/stamped-cache.ts';
import { type Coding, compressor, minCompressedBytes } from '../shared/compression.ts';
import { partsTagger } from '../shared/etags.ts';
import type { BundleDetails } from './bundle-details.schemas.ts';

const opening = Buffer.from('{"bundles":[');
const comma = Buffer.from(',');

/** A serialized bundle-details answer: one buffer, or over a megabyte its parts, never copied into one. */
export interface CachedDetails extends Stamped {
  parts: Buffer[];
  bytes: number;
  etag: string;
  /** The answer compressed, each coding made once, when first asked for; the weight counts each once made. */
  encoded?: Partial<Record<Coding, Promise<Buffer[]>>>;
}

/** A details answer as written: its bytes in order, how many, their ETag, and the coding they are in. */
export interface WrittenAnswer {
  parts: Buffer[];
  bytes: number;
  /** The plain answer's tag, whatever coding the parts are in. */
  etag: string;
  coding: Coding | null;
}

/**
 * The bytes JSON.stringify would make of `{ bundles, notFound }`, each bundle serialized as its round builds
 * it (bundles-details of 100 large bundles is 14 MB): hashed for the ETag as they come and, when `coding` names
 * one, compressed as they come once the answer reaches minCompressedBytes, so that an answer the client takes
 * compressed is never held whole in its plain form, nor copied into one buffer. A reading abandoned (a round saw a
 * bundle change, or the answer went over its budget) stops its compressor.
 */
export class DetailsAnswer {
  readonly #coding: Coding | null;
  readonly #tagger = partsTagger();
  #plain: Buffer[] = [];
  #plainBytes = 0;
  #compressor: Transform | null = null;
  readonly #encoded: Buffer[] = [];
  #encodedBytes = 0;
  #bundles = 0;

  constructor(coding: Coding | null) {
    this.#coding = coding;
    this.#write(opening);
  }

  add(details: BundleDetails): void {
    if (this.#bundles++ > 0) this.#write(comma);
    this.#write(Buffer.from(JSON.stringify(details)));
  }

  /**
   * Waits while the compressor holds more than its buffer's worth: called between rounds, so that a build faster
   * than its compression does not queue the answer in front of it.
   */
  async afterRound(): Promise<void> {
    if (this.#compressor?.writableNeedDrain) await once(this.#compressor, 'drain');
  }

  async finish(notFound: string[]): Promise<WrittenAnswer> {
    this.#write(Buffer.from(`],"notFound":${JSON.stringify(notFound)}}`));
    const etag = this.#tagger.tag();
    const compressor = this.#compressor;
    if (compressor === null) return { ...joinedWhenSmall(this.#plain, this.#plainBytes), etag, coding: null };
    compressor.end();
    await finished(compressor);
    return { ...joinedWhenSmall(this.#encoded, this.#encodedBytes), etag, coding: this.#coding };
  }

  abandon(): void {
    this.#compressor?.destroy();
  }

  #write(bytes: Buffer): void {
    this.#tagger.update(bytes);
    if (this.#compressor !== null) {
      this.#compressor.write(bytes);
      return;
    }
    this.#plain.push(bytes);
    this.#plainBytes += bytes.length;
    if (this.#coding !== null && this.#plainBytes >= minCompressedBytes) this.#startCompressing(this.#coding);
  }

  #startCompressing(coding: Coding): void {
    const stream = compressor(coding, 'each');
    // A failure surfaces where finish() waits for the stream; until then it must not go unheard.
    stream.on('error', () => {});
    stream.on('data', (chunk: Buffer) => {
      this.#encoded.push(chunk);
      this.#encodedBytes += chunk.length;
    });
    for (const part of this.#plain) stream.write(part);
    this.#plain = [];
    this.#compressor = stream;
  }
}

/** Up to this many bytes, an answer's parts are copied into one buffer: one write, and one piece to keep. */
const JOINED_BYTES = 1 << 20;

/** Parts of up to JOINED_BYTES in all, as one buffer. */
function joinedWhenSmall(parts: Buffer[], bytes: number): Pick<WrittenAnswer, 'parts' | 'bytes'> {
  return {
    parts: parts.length > 1 && bytes <= JOINED_BYTES ? [Buffer.concat(parts, bytes)] : parts,
    bytes,
  };
}

/**
 * The parts as a stream to send, rather than copied into one buffer. The stream holds each part until it is read:
 * an answer built for this request lets it go then, a kept one stays in the cache.
 */
export function partsStream(parts: readonly Buffer[]): Readable {
  const left = [...parts];
  return Readable.from(
    (function* () {
      for (let part = left.shift(); part !== undefined; part = left.shift()) yield part;
    })(),
    { objectMode: false },
  );
}
