import { AppError } from '../problems.ts';

/**
 * Lets at most `limit` heavy answers (bundle details, quote catalogues) be built at once, and up to `queue` more
 * wait their turn in arrival order; a request beyond that gets 503 at once. Building is CPU and memory: without a
 * bound, a few large requests at once stall every other request, /healthz included, and add up their memory.
 */
export class AnswerGate {
  readonly limit: number;
  readonly queue: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

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
    return this.#waiting.length;
  }

  async run<T>(build: () => Promise<T>): Promise<T> {
    if (this.#running < this.limit) {
      this.#running++;
    } else {
      if (this.#waiting.length >= this.queue) {
        throw new AppError(
          'service_unavailable',
          `The server is building ${this.limit} large answers with ${this.queue} more waiting; try again shortly`,
        );
      }
      // The one finishing hands its place over, so `running` does not change.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      return await build();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
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
