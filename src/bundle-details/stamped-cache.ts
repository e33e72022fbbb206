/** Something built from some bundles at one moment, and what tells whether it still holds. */
export interface Stamped {
  /** `version.tree_version` of each asked bundle that existed when it was read; the others were not found. */
  stamps: Map<string, string>;
  /** The first effective-date boundary after the moment it was built, of a book it involves (ms), or Infinity. */
  validUntil: number;
  /** Roughly how many bytes it holds. */
  weight: number;
}

/** A serialized bundle-details answer. */
export interface CachedDetails extends Stamped {
  body: Buffer;
  etag: string;
}

// Besides the value, each entry holds its key and stamps; this is a fair allowance for them and the Map slots.
const overheadPerEntry = 256;
const overheadPerStamp = 96;

function sizeOf(key: string, entry: Stamped): number {
  return entry.weight + key.length * 2 + overheadPerEntry + entry.stamps.size * overheadPerStamp;
}

function sameStamps(held: Map<string, string>, now: Map<string, string>): boolean {
  if (held.size !== now.size) return false;
  for (const [id, stamp] of held) if (now.get(id) !== stamp) return false;
  return true;
}

/**
 * Least recently used entries go first once the bytes held pass the bound. Entries are never trusted as they
 * are: `through` checks their stamps, read from the database by the caller, on every read.
 */
export class StampedCache<T extends Stamped> {
  readonly #maxBytes: number;
  readonly #entries = new Map<string, { entry: T; size: number }>();
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

  get(key: string): T | undefined {
    const held = this.#entries.get(key);
    if (!held) return undefined;
    // Map keeps insertion order: re-inserting makes this the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, held);
    return held.entry;
  }

  set(key: string, entry: T): void {
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

  /**
   * The entry under `key` while its stamps equal `stamps` and `now` is before its validUntil, else a new one from
   * `build`, kept. Stamps must be read before `build` reads its data: a write landing in between then leaves stamps
   * older than the data, and the next request rebuilds; an entry can be needlessly dropped, never stale.
   */
  async through(key: string, stamps: Map<string, string>, now: number, build: () => Promise<T>): Promise<T> {
    const held = this.get(key);
    if (held && now < held.validUntil && sameStamps(held.stamps, stamps)) return held;
    const entry = await build();
    this.set(key, entry);
    return entry;
  }
}
