import { RecencyMap } from '../recency-map.ts';
import type { CatalogueRows } from './catalogue.repository.ts';
import { SharedReads } from './shared-reads.ts';

/** Something built from some bundles at one moment, and what tells whether it still holds. */
export interface Stamped {
  /** `version.tree_version` of each asked bundle that existed in the snapshot it was read from; the others were
   * not found. */
  stamps: Map<string, string>;
  /** The first effective-date boundary after the moment it was built, of a book it involves (ms), or Infinity. */
  validUntil: number;
  /** Roughly how many bytes it holds. */
  weight: number;
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
  readonly #entries = new RecencyMap<{ entry: T; size: number }>();
  #bytes = 0;
  /** Reads answered from an entry, and reads that had to build one (for /metrics). */
  hits = 0;
  misses = 0;
  /** Reads answered by a build another request had under way for the same state (for /metrics). */
  sharedBuilds = 0;
  readonly #building = new Map<string, Promise<T>>();
  /** The stamp checks of requests for the same bundles with the same key, shared when they come at once. */
  readonly stampReads = new SharedReads<{ stamps: Map<string, string>; keyLive: boolean }>();

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get sharedStampChecks(): number {
    return this.stampReads.shared;
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
    this.#entries.touch(key, held);
    return held.entry;
  }

  set(key: string, entry: T): void {
    this.delete(key);
    const size = sizeOf(key, entry);
    if (size > this.#maxBytes) return;
    this.#entries.set(key, { entry, size });
    this.#bytes += size;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#maxBytes) break;
      this.delete(oldest);
    }
  }

  /**
   * Weighs `bytes` more (fewer, when negative) into `entry`, for what was kept beside it (a compressed form, a
   * configure outcome), and counts it again if it is still the one held under `key`.
   */
  grow(key: string, entry: T, bytes: number): void {
    entry.weight += bytes;
    if (this.#entries.get(key)?.entry === entry) this.set(key, entry);
  }

  delete(key: string): void {
    const held = this.#entries.get(key);
    if (!held) return;
    this.#entries.delete(key);
    this.#bytes -= held.size;
  }

  /**
   * The entry under `key` while its stamps equal `stamps` (read now, in one statement) and `now` is before its
   * validUntil, else a new one from `build`, kept. `build` must read its stamps in the same snapshot as its data
   * (readSnapshot), so equal stamps later mean nothing the entry was made of has changed.
   */
  async through(key: string, stamps: Map<string, string>, now: number, build: () => Promise<T>): Promise<T> {
    const held = this.get(key);
    if (held && now < held.validUntil && sameStamps(held.stamps, stamps)) {
      this.hits++;
      return held;
    }
    // Requests that miss together share one build: one each would fill the heavy-answer gate and turn most away. A
    // request takes the shared entry only if it holds the state its own stamps saw (the rule a hit follows), and
    // otherwise builds its own.
    const underWay = this.#building.get(key);
    if (underWay !== undefined) {
      // A build that failed fails its own request only: this one builds again.
      const shared = await underWay.catch(() => undefined);
      if (shared && now < shared.validUntil && sameStamps(shared.stamps, stamps)) {
        this.sharedBuilds++;
        return shared;
      }
    }
    this.misses++;
    const building = build();
    this.#building.set(key, building);
    try {
      const entry = await building;
      this.set(key, entry);
      return entry;
    } finally {
      if (this.#building.get(key) === building) this.#building.delete(key);
    }
  }
}

/**
 * When what was read at `at` next changes by the clock alone: the first start or end, after `at`, of a book it
 * involves (ms). A book that becomes effective later is then never served as not yet effective, nor one that has
 * ended as live.
 */
export function nextBoundary(books: CatalogueRows['books'], at: string): number {
  let next = Number.POSITIVE_INFINITY;
  for (const book of books) {
    if (book.is_deleted) continue;
    for (const boundary of [book.effective_start_date, book.effective_end_date]) {
      if (boundary !== null && boundary > at) next = Math.min(next, Date.parse(boundary));
    }
  }
  return next;
}
