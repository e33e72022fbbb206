import { Piscina } from 'piscina';
import { AppError } from '../problems.ts';
import type { Configured } from '../rules/configurator.ts';
import type { ConfigureResult, ConfigureTask } from '../rules/configure.worker.ts';

// The threads configure searches in (docs/configuration.md, "Bounded"): none until the first search, at most
// `threads`, each stopped after a quiet spell, so a process that never configures holds none. Each thread stops its
// own search at the CPU budget; one that has not answered after BUDGETS_WAITED budgets (queued, starved of CPU, or
// stuck) is terminated and another started in its place, so every request is answered in that time.

export interface ConfigurePoolLimits {
  threads: number;
  budgetMs: number;
  maxSteps: number;
}

/** How long, in budgets, a request waits for its search (queued and running) before it is refused. */
const BUDGETS_WAITED = 2.5;
/** Milliseconds a thread with nothing to do stays before it stops. */
const IDLE_MS = 30_000;
/** Searches waiting for a thread, per thread, before a request is turned away at once. */
const QUEUED_PER_THREAD = 16;

/** What a search came to: an answer, or the bound it passed (`wait`: it was not answered in time). */
export type Searched = { configured: Configured } | { refused: 'steps' | 'time' | 'wait' };

export class ConfigurePool {
  readonly limits: ConfigurePoolLimits;
  #pool: Piscina<ConfigureTask, ConfigureResult> | null = null;

  constructor(limits: ConfigurePoolLimits) {
    this.limits = limits;
  }

  /** Threads running now (0 before the first search and after a quiet spell). */
  get threads(): number {
    return this.#pool?.threads.length ?? 0;
  }

  async search(task: Omit<ConfigureTask, 'maxSteps' | 'budgetMs'>): Promise<Searched> {
    const { threads, budgetMs, maxSteps } = this.limits;
    this.#pool ??= new Piscina({
      filename: new URL('../rules/configure.worker.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: IDLE_MS,
      maxQueue: threads * QUEUED_PER_THREAD,
      // What a search may hold: its model, the solver's learned clauses and the answer.
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 },
    });
    const pool = this.#pool;
    if (pool.queueSize >= pool.options.maxQueue) {
      throw new AppError(
        'service_unavailable',
        `The server is working out ${pool.queueSize + threads} configurations already; try again shortly`,
      );
    }
    try {
      return await pool.run(
        { ...task, maxSteps, budgetMs },
        { signal: AbortSignal.timeout(Math.ceil(BUDGETS_WAITED * budgetMs)) },
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') return { refused: 'wait' };
      throw error;
    }
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    await pool?.destroy();
  }
}
