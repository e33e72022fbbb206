import type { Stamped } from '../catalogue/stamped-cache.ts';
import type { EncodedForms } from '../shared/compression.ts';
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
  encoded?: EncodedForms;
}

/** A details answer as written: its bytes in order, how many, and their ETag. */
export interface WrittenAnswer {
  parts: Buffer[];
  bytes: number;
  etag: string;
}

/**
 * The bytes JSON.stringify would make of `{ bundles, notFound }`, each bundle serialized as its round builds it and
 * hashed for the ETag as it comes, so a large answer is never copied into one buffer.
 */
export class DetailsAnswer {
  readonly #tagger = partsTagger();
  readonly #parts: Buffer[] = [];
  #bytes = 0;
  #bundles = 0;

  constructor() {
    this.#write(opening);
  }

  add(details: BundleDetails): void {
    if (this.#bundles++ > 0) this.#write(comma);
    this.#write(Buffer.from(JSON.stringify(details)));
  }

  finish(notFound: string[]): WrittenAnswer {
    this.#write(Buffer.from(`],"notFound":${JSON.stringify(notFound)}}`));
    return { ...joinedWhenSmall(this.#parts, this.#bytes), etag: this.#tagger.tag() };
  }

  #write(bytes: Buffer): void {
    this.#tagger.update(bytes);
    this.#parts.push(bytes);
    this.#bytes += bytes.length;
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
