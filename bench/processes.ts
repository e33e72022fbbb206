// The processes under test: the real service started from its command line, and the ceiling server. Both run
// on the same Node binary as the bench, each in its own process so that its memory can be read alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface Child {
  process: ChildProcess;
  pid: number;
  baseUrl: string;
  /** The last lines the child wrote, shown when something fails. */
  output(): string;
  stop(): Promise<void>;
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return address.port;
}

function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  cwd = repoRoot,
): Omit<Child, 'stop'> & { exited: Promise<void> } {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${args.join(' ')}`);
  let tail = '';
  const collect = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return {
    process: child,
    pid: child.pid,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => tail,
    exited: once(child, 'exit').then(() => undefined),
  };
}

async function untilReady(
  child: Omit<Child, 'stop'> & { exited: Promise<void> },
  path: string,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`${child.baseUrl}${path}`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.process.kill('SIGKILL');
  throw new Error(`${child.process.spawnargs.join(' ')} did not become ready:\n${child.output()}`);
}

function stopper(child: Omit<Child, 'stop'> & { exited: Promise<void> }): () => Promise<void> {
  return async () => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    child.process.kill('SIGTERM');
    const forced = setTimeout(() => child.process.kill('SIGKILL'), 30_000);
    await child.exited;
    clearTimeout(forced);
  };
}

export interface ServiceOptions {
  databaseUrl: string | null;
  sqlitePath: string;
  /** Writes a V8 CPU profile of the service into this directory when it stops. */
  cpuProfileDir?: string;
  /** The checkout whose code runs; this one by default (bench:compare runs another beside it). */
  cwd?: string;
  /** More of the service's environment (DETAILS_CACHE_BYTES=0, say). */
  env?: Record<string, string>;
  /** `serve --workers N`: N worker processes on one port. */
  workers?: number;
}

/**
 * The program that `npm start` and `cpq` run in the checkout `cwd`, with the environment and Node flags of its
 * first line (`#!/usr/bin/env -S node --max-semi-space-size=8
 * --no-memory-reducer`). Read from the checkout that runs, so that bench:compare's base gets its own: before
 * bin/cpq.js, that was src/cli.ts.
 */
export function cliEntry(cwd: string): { program: string; nodeFlags: string[]; env: Record<string, string> } {
  const program = existsSync(join(cwd, 'bin/cpq.js')) ? 'bin/cpq.js' : 'src/cli.ts';
  const words = (readFileSync(join(cwd, program), 'utf8').split('\n', 1)[0] ?? '').split(' ');
  const env = Object.fromEntries(
    words.filter((word) => /^[A-Z][A-Z0-9_]*=/.test(word)).map((word) => word.split(/=(.*)/s, 2)),
  );
  return { program, nodeFlags: words.filter((word) => word.startsWith('--')), env };
}

/** `bin/cpq.js serve`, exactly as an operator starts it (its first line's environment and Node flags included). */
async function startService(options: ServiceOptions, port: number): Promise<Child> {
  const profiling = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  // Node's own flags for the service (V8 heap sizes, say), to measure what one changes without editing code.
  const nodeFlags = process.env.CPQ_BENCH_NODE_FLAGS?.split(' ').filter((flag) => flag !== '') ?? [];
  const entry = cliEntry(options.cwd ?? repoRoot);
  const child = start(
    [
      ...entry.nodeFlags,
      ...nodeFlags,
      ...profiling,
      entry.program,
      'serve',
      ...(options.workers === undefined ? [] : ['--workers', String(options.workers)]),
    ],
    {
      ...process.env,
      ...entry.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DATABASE_URL: options.databaseUrl ?? '',
      SQLITE_PATH: options.sqlitePath,
      // One key drives every scenario: the limiter keeps running (its cost is part of every request) but at a
      // rate no scenario reaches.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      // The webhooks section delivers to a receiver on 127.0.0.1, over http.
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      ...options.env,
    },
    port,
    options.cwd,
  );
  await untilReady(child, '/readyz');
  // The first worker to listen answers /readyz; the others are still starting (measure after idle(), which waits
  // for their start-up's CPU to end).
  if (options.workers !== undefined) await untilWorkers(child, options.workers);
  return { ...child, stop: stopper(child) };
}

async function untilWorkers(child: Omit<Child, 'stop'> & { exited: Promise<void> }, count: number) {
  const deadline = Date.now() + 30_000;
  while (processTree(child.pid).length < count + 1) {
    if (Date.now() > deadline) {
      child.process.kill('SIGKILL');
      throw new Error(`${count} workers did not start:\n${child.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The service under test, on one port for the whole run. Requests a client gave up on still run to the end, so
 * before each measurement it must have worked off what the last one left queued; a backlog that has not
 * cleared within a minute gets a fresh process instead of stalling the run, and the restart is reported.
 */
export class ServiceUnderTest {
  child: Child;
  restarts = 0;
  /** Resident set size once the first process was ready, before any load. */
  readonly startRssBytes: number;
  #peakRssBytes = 0;
  readonly #options: ServiceOptions;
  readonly #port: number;

  private constructor(options: ServiceOptions, port: number, child: Child) {
    this.#options = options;
    this.#port = port;
    this.child = child;
    this.startRssBytes = residentSetSize(child.pid);
  }

  static async start(options: ServiceOptions): Promise<ServiceUnderTest> {
    const port = await freeLoopbackPort();
    // Measured as a restart: a first start keeps the project's TypeScript stripped of its types (bin/cpq.js), which
    // spares every later start the memory of Node's TypeScript parser; only a new release's first start goes without.
    await (await startService(options, port)).stop();
    return new ServiceUnderTest(options, port, await startService(options, port));
  }

  get baseUrl(): string {
    return this.child.baseUrl;
  }

  /** The options it was started with, for a second service on the same database. */
  get options(): ServiceOptions {
    return this.#options;
  }

  /** The highest VmHWM seen across the run, over restarts and peak resets. */
  peakRssBytes(): number {
    const { exitCode, signalCode } = this.child.process;
    if (exitCode === null && signalCode === null) {
      this.#peakRssBytes = Math.max(this.#peakRssBytes, peakRss(this.child.pid));
    }
    return this.#peakRssBytes;
  }

  /** Starts a new peak for one scenario, keeping the old one in the run's peak. */
  resetPeak(): void {
    this.peakRssBytes();
    resetPeakRss(this.child.pid);
  }

  async idle(): Promise<void> {
    if (await untilIdle(this.child, 60_000)) return;
    this.peakRssBytes();
    this.child.process.kill('SIGKILL');
    await this.child.stop();
    this.restarts++;
    this.child = await startService(this.#options, this.#port);
  }

  async stop(): Promise<void> {
    this.peakRssBytes();
    await this.child.stop();
  }
}

/** The ceiling server (bench/ceiling-server.ts) answering `body` at /ceiling. */
export async function startCeiling(body: Buffer): Promise<Child> {
  const bodyFile = join(tmpdir(), `cpq-bench-ceiling-${process.pid}.json`);
  writeFileSync(bodyFile, body);
  const port = await freeLoopbackPort();
  const child = start(
    ['bench/ceiling-server.ts', bodyFile],
    { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    port,
  );
  try {
    await untilReady(child, '/ceiling');
  } finally {
    rmSync(bodyFile, { force: true });
  }
  return { ...child, stop: stopper(child) };
}

/**
 * The process and its children: the workers of `cpq serve --workers N`, which the primary forks from its main
 * thread. A process that has just exited is left out.
 */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map(Number);
  } catch {
    // gone
  }
  return [pid, ...children];
}

/** Visits the process and its children, skipping any child that exits while it is visited. */
function eachInTree(pid: number, visit: (member: number) => void): void {
  for (const member of processTree(pid)) {
    try {
      visit(member);
    } catch (error) {
      if (member === pid || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** A reading summed over the process and its children. */
function overTree(pid: number, read: (member: number) => number): number {
  let total = 0;
  eachInTree(pid, (member) => {
    total += read(member);
  });
  return total;
}

/**
 * Proportional set size in bytes, summed over the process and its workers: each shared page counted once, divided
 * among the processes that map it, so that N workers are not charged N times for Node's binary.
 */
export function proportionalSetSize(pid: number): number {
  return overTree(pid, (member) => kibIn(member, 'smaps_rollup', 'Pss') * 1024);
}

/** A `<field>: <n> kB` line of one of the process's files under /proc. */
function kibIn(pid: number, file: 'status' | 'smaps_rollup', field: 'VmHWM' | 'VmRSS' | 'Pss'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(
    readFileSync(`/proc/${pid}/${file}`, 'utf8'),
  );
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]);
}

/**
 * Peak resident set size (VmHWM) in bytes since the process started or since resetPeakRss; with workers, the sum
 * of each process's own peak (pages they share, such as Node's binary, counted in each).
 */
export function peakRss(pid: number): number {
  return overTree(pid, (member) => kibIn(member, 'status', 'VmHWM') * 1024);
}

/** Resident set size (VmRSS) in bytes now, summed over the process and its workers as peakRss is. */
export function residentSetSize(pid: number): number {
  return overTree(pid, (member) => kibIn(member, 'status', 'VmRSS') * 1024);
}

/** Lowers the peak to the current size (Linux clear_refs 5), so the next reading is one scenario's peak. */
export function resetPeakRss(pid: number): void {
  eachInTree(pid, (member) => writeFileSync(`/proc/${member}/clear_refs`, '5'));
}

/** CPU time the process and its workers have used, user and system, in clock ticks (1/100 s). */
export function cpuTicks(pid: number): number {
  return overTree(pid, (member) => {
    // Fields after the command name, which may itself hold spaces: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${member}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[11]) + Number(fields[12]);
  });
}

/**
 * Whether the child went idle within the time given. Idle means it barely uses the CPU (a SQLite backlog runs
 * in-process) and a query through its pool answers at once (a PostgreSQL backlog waits in the pool while the
 * process looks idle).
 */
async function untilIdle(child: Child, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ticks = cpuTicks(child.pid);
    const started = performance.now();
    const ready = await fetch(`${child.baseUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    const answeredMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Clock ticks are 1/100 s: 3 ticks in 300 ms is 10% of one core.
    if (ready && answeredMs < 50 && cpuTicks(child.pid) - ticks <= 3) return true;
  }
  return false;
}
