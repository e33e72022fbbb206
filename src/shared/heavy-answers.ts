import { AppError } from '../problems.ts';

interface Waiter {
  go: () => void;
  refuse: (error: AppError) => void;
}

/**
 * Lets at most `limit` heavy answers (bundle details, quote catalogues) be built at once and `queue` more wait, and
 * answers 503 beyond that: unbounded, a few large requests would stall every other one, /healthz included, and add
 * up their memory. The places are shared by account (docs/limits.md, "Sharing by account").
 */
export class AnswerGate {
  readonly limit: number;
  readonly queue: number;
  #running = 0;
  #waitingCount = 0;
  /** Each account's waiters in arrival order; the map's order is the accounts' turn order. */
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(limit: number, queue: number) {
    this.limit = limit;
    this.queue = queue;
  }

  /** Answers being built now. */
  get running(): number {
    return this.#running;
  }

  /** Answers waiting for their turn. */
  get waiting(): number {
    return this.#waitingCount;
  }

  async run<T>(accountId: string, build: () => Promise<T>): Promise<T> {
    if (this.#running < this.limit) {
      this.#running++;
    } else {
      if (this.#waitingCount >= this.queue && !this.#shedFor(accountId)) throw this.#busy();
      // The one finishing hands its place over, so `running` does not change.
      await new Promise<void>((go, refuse) => {
        const own = this.#waiting.get(accountId);
        if (own) own.push({ go, refuse });
        else this.#waiting.set(accountId, [{ go, refuse }]);
        this.#waitingCount++;
      });
    }
    try {
      return await build();
    } finally {
      this.#next();
    }
  }

  /** Hands the place to the first waiter of the account next in turn, which then goes to the back of the turn. */
  #next(): void {
    const first = this.#waiting.entries().next();
    if (first.done) {
      this.#running--;
      return;
    }
    const [accountId, waiters] = first.value;
    const waiter = waiters.shift() as Waiter;
    this.#waitingCount--;
    this.#waiting.delete(accountId);
    if (waiters.length > 0) this.#waiting.set(accountId, waiters);
    waiter.go();
  }

  /** Makes room for `accountId` by refusing the newest waiter of the account with the most, if it has more. */
  #shedFor(accountId: string): boolean {
    const own = this.#waiting.get(accountId)?.length ?? 0;
    let most: [string, Waiter[]] | undefined;
    for (const entry of this.#waiting) {
      if (entry[1].length > (most?.[1].length ?? own + 1)) most = entry;
    }
    if (!most) return false;
    const [heaviest, waiters] = most;
    const shed = waiters.pop() as Waiter;
    if (waiters.length === 0) this.#waiting.delete(heaviest);
    this.#waitingCount--;
    shed.refuse(this.#busy());
    return true;
  }

  #busy(): AppError {
    return new AppError(
      'service_unavailable',
      `The server is building ${this.limit} large answers with ${this.queue} more waiting; try again shortly`,
    );
  }
}

/**
 * The bytes an answer may take, counted while it is built, so a request for too much stops before the memory is
 * spent. Counts are of characters of the JSON to be written, close enough to its bytes for a limit.
 */
export class AnswerBudget {
  readonly limit: number;
  readonly #advice: string;
  #spent = 0;

  /** `advice` ends the problem's detail: what the client can ask for instead. */
  constructor(limit: number, advice: string) {
    this.limit = limit;
    this.#advice = advice;
  }

  spend(bytes: number): void {
    this.#spent += bytes;
    if (this.#spent > this.limit) {
      throw new AppError(
        'answer_too_large',
        `The answer would be over the limit of ${this.limit} bytes (ANSWER_MAX_BYTES); ${this.#advice}`,
      );
    }
  }
}
