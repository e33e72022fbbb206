import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How much V8 lets the old generation grow past what its last full collection found alive, in percent. V8's own
 * factor (up to 4x when the process allocates fast) let a service whose live set is 30-50 MB take 300 MB under an
 * apply of a catalogue file or a burst of heavy answers, garbage waiting for a collection that the limit had not yet
 * called for. At 20% a full collection comes sooner; each costs a few milliseconds, most of it concurrent, and the
 * bench shows no loss of throughput.
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
 * Shapes V8's heap for a long-running service, once it has started and before it takes connections. Starting
 * (type stripping, loading ~1,200 modules, registering every route and its schemas) grows the young generation to
 * its largest and leaves it resident, though empty, until load comes: one full collection that gives memory back
 * (~90 ms) takes RSS after start from ~180 to ~125 MB. An operator's own `--heap-growing-percent` (`node
 * --heap-growing-percent=50 bin/cpq.js serve`) stands.
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
 * Gives the heap's memory back once the process falls idle after work that grew it, as a JVM's G1 does when idle.
 * Whatever a burst of requests made V8's heap grow to stays resident after it (see collectGivingBack), so without
 * this the process's RSS is the highest its heap has ever been. A collection runs when a whole interval passed
 * with the event loop nearly idle and RSS has grown by `grownBytes` since the last one: once per quiet spell, not
 * every interval, and never while requests keep the loop busy. Its pause (tens of milliseconds) falls on a process
 * that had nothing to do; a request arriving during it waits that long. Its cost comes after, too: such a
 * collection also drops the hidden classes no live object has, among them those of a request's own objects, and V8
 * discards the optimised code that checks them, so the next seconds of work run on slower code while it optimises
 * again. Hence a quiet spell of seconds (IDLE_COLLECT_MS), not a pause between bursts, and a growth of 64 MB: what
 * ordinary traffic grows the process by (the young generation, the caches, the old generation's headroom: 40-60 MB
 * after start on a slow machine, up to 80-90 on a fast one, whose first burst may pass the mark once) is taken again
 * by its next burst, so giving it back bought nothing and cost that burst its optimised code (warm details 1.16x
 * their CPU in the bench's alternating rounds); memory a heavy burst grew past that goes back. V8's own memory
 * reducer, which makes the same kind of collection ~8 s after a full one once allocation slows, is off
 * (`--no-memory-reducer` in bin/cpq.js), so this is the one rule for it.
 */
export function collectWhenIdle({
  intervalMs,
  grownBytes = 64 * 1024 * 1024,
  onCollect,
}: IdleCollectorOptions): { stop(): void } {
  if (intervalMs === 0) return { stop: () => {} };
  let rssAfterLast = process.memoryUsage.rss();
  let since = performance.eventLoopUtilization();
  const timer = setInterval(() => {
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
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
