import { setPriority } from 'node:os';
import { RecencyMap } from '../recency-map.ts';
import {
  type Configured,
  compileSource,
  configure,
  type Model,
  SearchBudgetExceeded,
} from './configurator.ts';

// A configure search in a thread of the pool (src/quotes/configure.pool.ts): it stops at its budget of this thread's
// CPU time, and the thread runs at the lowest priority, so a busy core serves the event loop and the database first.

/** What the service asks of a thread. */
export interface ConfigureTask {
  /** Names one version of a bundle's model, for this thread to compile it once. */
  modelKey: string;
  /** The model's options and rules as JSON ({ options, rules }); parsed only when the thread lacks the model. */
  source: string;
  chosen: number[];
  rejected: number[];
  maxSteps: number;
  /** CPU time, in milliseconds, the search (compiling included) may spend. */
  budgetMs: number;
  /** When (Date.now()) the request stops waiting: a search not done by then stops too, its thread kept. */
  deadline: number;
}

/** What a search came to: an answer, or the bound it passed (`wait`: the deadline, on a busy machine). */
export type ConfigureResult = { configured: Configured } | { refused: 'steps' | 'time' | 'wait' };

const MODELS_KEPT = 32;
const models = new RecencyMap<Model>();

try {
  setPriority(19);
} catch {
  // Not allowed here: the thread runs at the process's priority.
}

function modelOf(task: ConfigureTask): Model {
  const held = models.get(task.modelKey);
  if (held !== undefined) {
    models.touch(task.modelKey, held);
    return held;
  }
  const model = compileSource(task.source);
  for (const [oldest] of models) {
    if (models.size < MODELS_KEPT) break;
    models.delete(oldest);
  }
  models.set(task.modelKey, model);
  return model;
}

export default function search(task: ConfigureTask): ConfigureResult {
  if (Date.now() >= task.deadline) return { refused: 'wait' };
  const started = process.threadCpuUsage();
  const startedAt = performance.now();
  const limit = task.budgetMs * 1000;
  let late = false;
  const spent = () => {
    late = Date.now() >= task.deadline;
    if (late) return true;
    // A thread's CPU time cannot pass the time since it started: the costlier reading only once that has.
    if (performance.now() - startedAt <= task.budgetMs) return false;
    const used = process.threadCpuUsage(started);
    return used.user + used.system > limit;
  };
  try {
    const model = modelOf(task);
    const fixed = { chosen: task.chosen, rejected: task.rejected };
    return { configured: configure(model, fixed, { maxSteps: task.maxSteps, spent }) };
  } catch (error) {
    if (error instanceof SearchBudgetExceeded)
      return { refused: error.by === 'time' && late ? 'wait' : error.by };
    throw error;
  }
}
