import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../problems.ts';
import { configure, type Model, SearchBudgetExceeded } from '../rules/configurator.ts';
import type { ConfigureResult, ConfigureTask } from '../rules/configure.worker.ts';

// Where configure searches run (docs/configuration.md, "Bounded"): on the event loop for a moment, which settles
// most, and in threads started on demand for the rest. A thread stops its search at the CPU budget or the request's
// deadline; one still busy after that is replaced, so every request is answered within three budgets.

export interface ConfigurePoolLimits {
  threads: number;
  budgetMs: number;
  maxSteps: number;
}

/**
 * Milliseconds a search may hold the event loop before it is left to a thread, to start again there with the whole
 * budget: long enough for the searches of most bundles, spared the hop to a thread and back (and its queue), short
 * enough that a hard one holds up the requests behind it only briefly.
 */
const INLINE_MS = 2;
/** How long, in budgets, a request waits for its search (queued and running) before it is refused. */
const BUDGETS_WAITED = 2;
/** How long, in budgets, before a thread still searching is terminated. */
const BUDGETS_TO_TERMINATE = 2.5;
/** Milliseconds a thread with nothing to do stays before it stops. */
const IDLE_MS = 30_000;
/** Searches waiting for a thread, per thread, before a request is turned away at once. */
const QUEUED_PER_THREAD = 128;

let workerFile: Promise<string> | null = null;

/**
 * The thread's code as one file of plain JavaScript, built by esbuild once per process into a directory of its own
 * (removed at exit): a thread that loads TypeScript loads Node's type stripper as well, twice a thread's memory.
 */
function builtWorker(): Promise<string> {
  workerFile ??= (async () => {
    // Loaded here, not at the top: a service that never configures never starts esbuild. Its service process is
    // stopped once the file is built, or it would stay resident beside ours for the process's life.
    const { build, stop } = await import('esbuild');
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../rules/configure.worker.ts', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      packages: 'external',
      legalComments: 'none',
      logLevel: 'silent',
      write: false,
    }).finally(stop);
    const [output] = result.outputFiles;
    if (output === undefined) throw new Error('the configure worker build made nothing');
    const dir = mkdtempSync(join(tmpdir(), 'cpq-configure-'));
    const file = join(dir, 'configure.worker.mjs');
    writeFileSync(file, output.contents);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return pathToFileURL(file).href;
  })();
  return workerFile;
}

export class ConfigurePool {
  readonly limits: ConfigurePoolLimits;
  #pool: Piscina<ConfigureTask, ConfigureResult> | null = null;

  constructor(limits: ConfigurePoolLimits) {
    this.limits = limits;
  }

  /** The search of `task` (`model` is its source compiled): on the event loop for INLINE_MS at most, else in a thread. */
  async search(
    task: Omit<ConfigureTask, 'maxSteps' | 'budgetMs' | 'deadline'>,
    model: Model,
  ): Promise<ConfigureResult | { refused: 'memory' }> {
    const { threads, budgetMs, maxSteps } = this.limits;
    const until = performance.now() + INLINE_MS;
    try {
      const fixed = { chosen: task.chosen, rejected: task.rejected };
      return { configured: configure(model, fixed, { maxSteps, spent: () => performance.now() > until }) };
    } catch (error) {
      if (!(error instanceof SearchBudgetExceeded)) throw error;
      // Steps are counted alike wherever the search runs: a thread would pass them too.
      if (error.by === 'steps') return { refused: 'steps' };
    }
    const filename = await builtWorker();
    this.#pool ??= new Piscina({
      filename,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: IDLE_MS,
      maxQueue: threads * QUEUED_PER_THREAD,
      // What a search may hold: its model, the solver's learned clauses and the answer. A small young generation:
      // a search's garbage is short-lived, and every MB of it is resident in each thread.
      resourceLimits: { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 2 },
    });
    const pool = this.#pool;
    if (pool.queueSize >= pool.options.maxQueue) {
      throw new AppError(
        'service_unavailable',
        `The server is working out ${pool.queueSize + threads} configurations already; try again shortly`,
      );
    }
    try {
      const deadline = Date.now() + BUDGETS_WAITED * budgetMs;
      return await pool.run(
        { ...task, maxSteps, budgetMs, deadline },
        { signal: AbortSignal.timeout(Math.ceil(BUDGETS_TO_TERMINATE * budgetMs)) },
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') return { refused: 'wait' };
      // The thread is gone and another takes its place; the same search would run out again.
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return { refused: 'memory' };
      throw error;
    }
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    await pool?.destroy();
  }
}
