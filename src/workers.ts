import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, prepareStore } from './db/store.ts';
import { settleHeap } from './heap.ts';
import type { WorkerRole } from './server.ts';

// `cpq serve --workers N`: N processes of the service on one port (node:cluster), each with its own pool and caches,
// kept coherent by the stamps every read checks, as across instances. The primary migrates once before any worker
// starts, restarts a worker that dies, and stops them all on SIGTERM or SIGINT.

const stopMessage = 'cpq:stop';

/** `auto` is one worker per core this process may use. */
export function workerCount(value: string): number | null {
  if (value === 'auto') return availableParallelism();
  const count = Number(value);
  return Number.isInteger(count) && count >= 1 && count <= 64 ? count : null;
}

/** In a worker: the primary's word to stop, or the primary gone (its channel closed), both stop it gracefully. */
export const asWorker: WorkerRole = {
  onStopRequest(stop) {
    process.on('message', (message) => {
      if (message === stopMessage) stop('stop requested by the primary');
    });
    process.once('disconnect', () => stop('the primary is gone'));
  },
  // The channel to the primary would keep the stopped worker's process alive.
  stopped() {
    if (process.connected) process.disconnect();
  },
};

export function isWorker(): boolean {
  return cluster.isWorker;
}

export async function serveWorkers(config: Config, count: number): Promise<void> {
  const log = pino({ level: config.logLevel });
  const database = openDatabase(config);
  try {
    await prepareStore(database, (migration) => log.info({ migration }, 'migration applied'));
  } finally {
    await database.db.destroy();
  }
  // The primary only forks and watches from here on: what loading and migrating left in its heap goes back.
  settleHeap();

  let stopping = false;
  let failed = false;
  const listening = new Set<number>();
  let announced = false;
  const start = () => {
    const worker = cluster.fork();
    worker.on('listening', (address) => {
      listening.add(worker.id);
      if (announced || listening.size < count) return;
      announced = true;
      const host = address.address?.includes(':') ? `[${address.address}]` : address.address;
      log.info({ address: `http://${host}:${address.port}`, workers: count }, 'cpq is ready');
    });
    worker.on('exit', (code, signal) => onExit(worker, code, signal));
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    listening.delete(worker.id);
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log.info('stopped');
        process.exit(failed ? 1 : 0);
      }
      return;
    }
    // A worker that failed to start would fail again at once: the primary gives up rather than loop.
    if (!announced) {
      log.error({ workerPid: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      stopping = true;
      failed = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.send(stopMessage);
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    log.error({ workerPid: worker.process.pid, code, signal }, 'a worker exited; starting another');
    start();
  };
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, workers: count }, 'shutting down: each worker finishes its requests in flight');
    // A message, not a signal: a terminal's Ctrl-C already sent SIGINT to every worker, and a second signal would
    // end a worker at once.
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker?.isConnected()) worker.send(stopMessage);
    }
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  for (let i = 0; i < count; i++) start();
}
