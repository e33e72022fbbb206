const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One read shared by the requests that want the same thing at once, never a read that began before a request came (it
 * could miss a write the request saw committed): a request joins the next read, which starts when this turn of the
 * event loop ends, or the read under way does. docs/api.md, "Bundle details, quote and search caches", says why.
 */
export class SharedReads<T> {
  readonly #underWay = new Map<string, Promise<T>>();
  readonly #waiting = new Map<string, Promise<T>>();
  /** Reads a request joined instead of making its own (for /metrics). */
  shared = 0;

  read(key: string, read: () => Promise<T>): Promise<T> {
    const waiting = this.#waiting.get(key);
    if (waiting !== undefined) {
      this.shared++;
      return waiting;
    }
    const underWay = this.#underWay.get(key);
    const start = () => this.#start(key, read);
    const next = (underWay ?? nextTurn()).then(start, start);
    this.#waiting.set(key, next);
    return next;
  }

  #start(key: string, read: () => Promise<T>): Promise<T> {
    this.#waiting.delete(key);
    const started = read();
    this.#underWay.set(key, started);
    const settled = () => {
      if (this.#underWay.get(key) === started) this.#underWay.delete(key);
    };
    started.then(settled, settled);
    return started;
  }
}
