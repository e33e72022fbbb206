/**
 * A Map kept in the order its entries were last used, least recent first, for the caches that let their least
 * recently used entries go (Map keeps insertion order, so re-inserting an entry makes it the most recent). set()
 * puts an entry last, held before or not. touch() leaves the entry set last where it is: each delete leaves a hole
 * that the Map's table fills up with, and clearing the holes allocates a new table, ~0.7 KB a hit when one entry
 * takes every request.
 */
export class RecencyMap<V> extends Map<string, V> {
  #newest: string | undefined;

  override set(key: string, value: V): this {
    super.delete(key);
    super.set(key, value);
    this.#newest = key;
    return this;
  }

  override delete(key: string): boolean {
    if (key === this.#newest) this.#newest = undefined;
    return super.delete(key);
  }

  override clear(): void {
    this.#newest = undefined;
    super.clear();
  }

  /** Makes `key`, held with `value`, the most recently used. */
  touch(key: string, value: V): void {
    if (key !== this.#newest) this.set(key, value);
  }
}
