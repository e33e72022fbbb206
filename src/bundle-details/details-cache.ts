/** A serialized bundle-details answer and what it was made from, so a later request can tell if it still holds. */
export interface CachedDetails {
  /** `version.tree_version` of each asked bundle that existed when the answer was read; the others were notFound. */
  stamps: Map<string, string>;
  body: Buffer;
  etag: string;
  /** The first effective-date boundary after the answer's instant of a book it involves (ms), or Infinity. */
  validUntil: number;
}

// Besides the body, each entry holds its key and stamps; this is a fair allowance for them and the Map slots.
const overheadPerEntry = 256;
const overheadPerStamp = 96;

function sizeOf(key: string, entry: CachedDetails): number {
  return entry.body.byteLength + key.length * 2 + overheadPerEntry + entry.stamps.size * overheadPerStamp;
}

/**
 * Least recently used entries go first once the bytes held pass the bound. Entries are never trusted as they
 * are: the caller checks their stamps against the database on every read.
 */
export class DetailsCache {
  readonly #maxBytes: number;
  readonly #entries = new Map<string, { entry: CachedDetails; size: number }>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): CachedDetails | undefined {
    const held = this.#entries.get(key);
    if (!held) return undefined;
    // Map keeps insertion order: re-inserting makes this the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, held);
    return held.entry;
  }

  set(key: string, entry: CachedDetails): void {
    this.delete(key);
    const size = sizeOf(key, entry);
    if (size > this.#maxBytes) return;
    this.#entries.set(key, { entry, size });
    this.#bytes += size;
    for (const [oldest, held] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= held.size;
    }
  }

  delete(key: string): void {
    const held = this.#entries.get(key);
    if (!held) return;
    this.#entries.delete(key);
    this.#bytes -= held.size;
  }
}
