const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One read shared by the requests that want the same thing at the same moment, without ever giving a request a
 * read that began before it came: a read already under way may predate a write the request has seen committed, so
 * a request never joins it. It joins the next read instead, which waits for the one under way and then starts,
 * once, for everyone who came meanwhile. So at most one read per key is under way and one is waiting, however
 * many requests want it, and every request is answered from a read that began after it arrived.
 *
 * A read with nothing under way waits too, for the end of this turn of the event loop: the requests whose bytes
 * arrived together have all been parsed by then, and share it. On SQLite, whose statements run to their end as
 * soon as they start, that is the only moment requests can share one; on PostgreSQL it gathers the requests that
 * would each have sent their own before the first answer came. So fifty clients asking for one bundle cost the
 * database a statement per turn instead of one each, and the service the running or sending of it. Alone, a
 * request waits for the end of its turn and nothing more.
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
