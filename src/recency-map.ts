/**
 * A Map kept least recently used first, for the caches that let their oldest entries go. touch() leaves the entry
 * set last where it is: moving it by delete and set leaves holes in the Map's table, whose clearing allocates.
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
