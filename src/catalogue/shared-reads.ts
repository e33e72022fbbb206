/**
 * One read shared by the requests that want the same thing at the same moment, without ever giving a request a
 * read that began before it came: a read already under way may predate a write the request has seen committed, so
 * a request never joins it. It joins the next read instead, which waits for the one under way and then starts,
 * once, for everyone who came meanwhile. So at most one read per key is under way and one is waiting, however
 * many requests want it, and every request is answered from a read that began after it arrived.
 *
 * Under load on PostgreSQL most warm reads then share their stamp check: fifty clients asking for one bundle cost
 * the database a statement per round trip instead of one each, and the service the sending and parsing of it.
 * Alone, a request starts its read at once and waits for nothing more than before.
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
    if (underWay === undefined) return this.#start(key, read);
    const next = underWay.then(
      () => this.#start(key, read),
      () => this.#start(key, read),
    );
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
