import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How far V8 lets the old generation grow past its last live set, in percent: V8's own factor let garbage pile up
 * for hundreds of megabytes under a catalogue apply or a burst of heavy answers.
 */
const HEAP_GROWING_PERCENT = 20;

/** Whether the command that started Node set this V8 flag (V8 reads `_` and `-` alike). */
function givenByOperator(flag: string): boolean {
  return process.execArgv.some((given) => given.replaceAll('_', '-').split('=')[0] === flag);
}

let gc: ((options: object) => void) | undefined;

/**
 * A full collection that gives memory back: V8 keeps the pages a regular one frees in a pool, resident, for the
 * heap to grow into again; only this flavour returns them (and shrinks the young generation) to the system.
 */
function collectGivingBack(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as (options: object) => void;
  }
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Shapes V8's heap once started, before taking connections: start-up leaves the young generation at its largest, and a
 * collection that gives memory back returns it. An operator's own `--heap-growing-percent` stands.
 */
export function settleHeap(): void {
  if (!givenByOperator('--heap-growing-percent')) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  collectGivingBack();
}

export interface IdleCollection {
  rssBefore: number;
  rssAfter: number;
  pauseMs: number;
}

export interface IdleCollectorOptions {
  /** How often the process looks at how busy it was; idle means a whole interval nearly without work. 0: never. */
  intervalMs: number;
  /** How far RSS must have grown since the last collection for one to be worth its pause, and its cost after. */
  grownBytes?: number;
  onCollect?: (collection: IdleCollection) => void;
}

/** The share of an interval the event loop may have spent working and still count as idle (a timer, a poll). */
const QUIET_UTILIZATION = 0.05;

/** The process's RSS, or null: reading it opens a file, which fails when descriptors run out (EMFILE). */
function readRss(): number | null {
  try {
    return process.memoryUsage.rss();
  } catch {
    return null;
  }
}

/**
 * Gives the heap's memory back once the process falls idle after work grew it by `grownBytes`: a collection per quiet
 * spell, never while requests keep the loop busy, as V8's memory reducer is off (bin/cpq.js). Figures: bench/HISTORY.md.
 */
export function collectWhenIdle({
  intervalMs,
  grownBytes = 64 * 1024 * 1024,
  onCollect,
}: IdleCollectorOptions): { stop(): void } {
  if (intervalMs === 0) return { stop: () => {} };
  let rssAfterLast = process.memoryUsage.rss();
  let since = performance.eventLoopUtilization();
  const look = () => {
    const now = performance.eventLoopUtilization();
    const quiet = performance.eventLoopUtilization(now, since).utilization < QUIET_UTILIZATION;
    since = now;
    const rssBefore = readRss();
    if (rssBefore === null) return;
    if (!quiet || rssBefore - rssAfterLast < grownBytes) {
      // Memory the process gave back some other way (V8's own shrinking) lowers the mark to grow from.
      rssAfterLast = Math.min(rssAfterLast, rssBefore);
      return;
    }
    const started = performance.now();
    collectGivingBack();
    const pauseMs = performance.now() - started;
    rssAfterLast = readRss() ?? rssBefore;
    // The collection's own time is not the process's work: the next interval judges only what follows it.
    since = performance.eventLoopUtilization();
    onCollect?.({ rssBefore, rssAfter: rssAfterLast, pauseMs });
  };
  const timer = setInterval(() => {
    // Reading RSS opens a file: at the descriptor limit it throws EMFILE, which must not end the process.
    try {
      look();
    } catch {}
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
