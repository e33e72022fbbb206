import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Dialect } from '../../src/db/database.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { invariantViolations } from '../fuzz/invariants.ts';
import { createTestDatabase, databaseEnv, type TestDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../ops/server-process.ts';
import { REQUEST_TIMEOUT_MS, Workload, type WorkloadFigures } from './workload.ts';

export interface FaultReport {
  dialect: Dialect;
  fault: string;
  /** Faults injected, and those after which every check held. */
  injected: number;
  survived: number;
  figures: WorkloadFigures;
  /** Acknowledged writes missing, acknowledged deletes back, or bundles nobody made: must stay empty. */
  lost: string[];
  /** Anything else that went wrong: a 5xx other than a 503 problem, a hang, a broken invariant, a bad exit. */
  problems: string[];
}

export interface LoadOptions {
  /** Fault cycles (kill -9 only; the other faults happen once per run). */
  cycles?: number;
  /** Acknowledged writes to wait for before each fault. */
  writes?: number;
  workers?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function withService<T>(
  dialect: Dialect,
  work: (context: { database: TestDatabase; key: string; env: Record<string, string> }) => Promise<T>,
): Promise<T> {
  const database = await createTestDatabase(dialect);
  try {
    const key = (await createKey(database.handle.db, { accountId: 'faults', name: null, readOnly: false }))
      .plaintext;
    // The load is far above a key's rate limit, which is not what these faults are about.
    return await work({ database, key, env: { ...databaseEnv(database), RATE_LIMIT_PER_SECOND: '0' } });
  } finally {
    await database.drop();
  }
}

/** Settles what the fault left unanswered, then compares the account with the model and the data with the rules. */
async function check(workload: Workload, database: TestDatabase, report: FaultReport): Promise<boolean> {
  const before = report.lost.length + report.problems.length;
  await workload.settle();
  report.lost.push(...(await workload.verify()));
  report.problems.push(...workload.problems.splice(0), ...(await invariantViolations(database.handle.db)));
  return report.lost.length + report.problems.length === before;
}

/** SIGTERM, then SIGKILL if it is still there after 30 s: a server that will not stop fails the run, never hangs it. */
async function stopServer(server: ServerProcess, report: FaultReport): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
  const exit = await server.exited;
  clearTimeout(timer);
  if (exit.code !== 0) {
    report.problems.push(`the server exited with ${JSON.stringify(exit)} after SIGTERM: ${server.stderr()}`);
  }
}

/**
 * (a) `kill -9` of a real `cpq serve` while workers create, clone, price and delete; a new process on the same
 * database must hold every acknowledged write and no acknowledged delete, with the data whole.
 */
export function killDuringLoad(dialect: Dialect, options: LoadOptions = {}): Promise<FaultReport> {
  const { cycles = 2, writes = 30, workers = 4 } = options;
  return withService(dialect, async ({ database, key, env }) => {
    let server = await startServer(env);
    const workload = new Workload(key, server.address, workers);
    const report: FaultReport = {
      dialect,
      fault: 'kill -9 under load',
      injected: 0,
      survived: 0,
      figures: workload.figures,
      lost: [],
      problems: [],
    };
    try {
      for (let cycle = 0; cycle < cycles; cycle++) {
        const target = workload.figures.ackedWrites + writes;
        const running = workload.run({ haltOnFault: true });
        await until(() => workload.figures.ackedWrites >= target, 60_000, `${writes} acknowledged writes`);
        server.child.kill('SIGKILL');
        await server.exited;
        report.injected++;
        workload.stop();
        await running;
        server = await startServer(env);
        workload.retarget(server.address);
        if (await check(workload, database, report)) report.survived++;
      }
    } finally {
      await stopServer(server, report);
    }
    return report;
  });
}

/**
 * (c) SIGTERM under load: every request the server accepted (it logged it as incoming) gets a normal answer, the
 * process exits 0, and a new process holds every acknowledged write.
 */
export function sigtermDuringLoad(dialect: Dialect, options: LoadOptions = {}): Promise<FaultReport> {
  const { writes = 30, workers = 4 } = options;
  return withService(dialect, async ({ database, key, env }) => {
    let server = await startServer(env);
    const workload = new Workload(key, server.address, workers);
    const report: FaultReport = {
      dialect,
      fault: 'SIGTERM under load',
      injected: 0,
      survived: 0,
      figures: workload.figures,
      lost: [],
      problems: [],
    };
    try {
      const running = workload.run({ haltOnFault: true });
      await until(() => workload.figures.ackedWrites >= writes, 60_000, `${writes} acknowledged writes`);
      const before = report.problems.length;
      report.injected++;
      await stopServer(server, report);
      workload.stop();
      await running;
      const outcomes = new Map(workload.outcomes.map((o) => [o.requestId, o]));
      for (const line of server.logs()) {
        if (line.msg !== 'incoming request') continue;
        const outcome = outcomes.get(String(line.requestId));
        if (!outcome) continue;
        const status = outcome.status ?? 0;
        const normal =
          (status >= 200 && status < 500) || (status === 503 && outcome.body?.code === 'service_unavailable');
        if (!normal) {
          report.problems.push(`${outcome.requestId} was accepted, then ${outcome.error ?? status}`);
        }
      }
      server = await startServer(env);
      workload.retarget(server.address);
      if ((await check(workload, database, report)) && report.problems.length === before) report.survived++;
    } finally {
      await stopServer(server, report);
    }
    return report;
  });
}

const cluster = (action: 'start' | 'stop' | 'status') =>
  promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', '15', 'main', action]);

/** Starts the shared PostgreSQL cluster if it is down; other test runs depend on it. */
export async function ensurePostgresRunning(): Promise<void> {
  try {
    await cluster('status');
  } catch {
    await cluster('start');
  }
}

/**
 * (b) The PostgreSQL server stops and starts again under load, with the same `cpq serve` process throughout:
 * while it is down every /v1 request answers a 503 problem within the timeout and the process stays up; once it
 * is back the service resumes by itself, and every acknowledged write is there. It stops the shared cluster, so
 * it runs only from `npm run fuzz`, never in npm test.
 */
export function postgresRestartDuringLoad(
  options: LoadOptions & { downMs?: number } = {},
): Promise<FaultReport> {
  const { writes = 30, workers = 4, downMs = 3000 } = options;
  return withService('postgres', async ({ database, key, env }) => {
    const server = await startServer(env);
    const workload = new Workload(key, server.address, workers);
    const report: FaultReport = {
      dialect: 'postgres',
      fault: 'PostgreSQL restart under load',
      injected: 0,
      survived: 0,
      figures: workload.figures,
      lost: [],
      problems: [],
    };
    const before = () => report.lost.length + report.problems.length;
    let running: Promise<void> | undefined;
    try {
      running = workload.run({ haltOnFault: false });
      await until(() => workload.figures.ackedWrites >= writes, 60_000, `${writes} acknowledged writes`);
      const problemsBefore = before();
      try {
        await cluster('stop');
        report.injected++;
        // The cluster is down for certain from here until start is called: every probe must be a 503 problem.
        const deadline = Date.now() + downMs;
        while (Date.now() < deadline) {
          for (const path of ['/v1/bundles', '/readyz']) {
            const probe = await workload.request('GET', path);
            if (probe.status !== 503 || probe.body?.code !== 'service_unavailable') {
              report.problems.push(`GET ${path} while PostgreSQL was down: ${probe.status ?? probe.error}`);
            }
          }
          const health = await workload.request('GET', '/healthz');
          if (health.status !== 200)
            report.problems.push(`GET /healthz while PostgreSQL was down: ${health.status ?? health.error}`);
          await sleep(100);
        }
      } finally {
        await cluster('start');
      }
      // Full service again, from the same process: reads answer, and new writes are acknowledged.
      const start = Date.now();
      while ((await workload.request('GET', '/v1/bundles')).status !== 200) {
        if (Date.now() - start > REQUEST_TIMEOUT_MS) throw new Error('the service did not resume');
        await sleep(100);
      }
      const resumed = workload.figures.ackedWrites;
      await until(() => workload.figures.ackedWrites >= resumed + writes, 60_000, 'writes after the restart');
      if (server.child.exitCode !== null) report.problems.push('the service process ended');
      workload.stop();
      await running;
      if ((await check(workload, database, report)) && before() === problemsBefore) report.survived++;
    } finally {
      workload.stop();
      await running;
      await ensurePostgresRunning();
      await stopServer(server, report);
    }
    return report;
  });
}
