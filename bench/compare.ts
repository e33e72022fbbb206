// `npm run bench:compare -- --base REV [--head REV] [--dialect sqlite|postgres]... [--scenario NAME]... [--quick]`
// Two versions of the service side by side in one run: the base commit (checked out into a temporary worktree)
// and the head (this working tree, or --head REV). The base loads the bench catalogue with its own code and
// migrations; the head gets a copy of that very database, migrated by its own code, so both serve the same ids
// and one key and one request body fit both. Each scenario then drives both services with one autocannon
// instance, its connections dealt out in turn: the machine's noise falls on both alike, and the ratio head/base
// is what the comparison reports. Writes bench/results/compare.md.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Dialect } from '../src/db/database.ts';
import { adminQuery, postgresAdminUrl } from '../test/helpers/database.ts';
import type { SeededBundle } from './catalogue.ts';
import { type Measurement, measureTogether } from './load.ts';
import { cliEntry, cpuTicks, repoRoot, ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';
import { BenchError, call, type Scenario, scenariosFor } from './scenarios.ts';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    head: { type: 'string' },
    dialect: { type: 'string', multiple: true },
    scenario: { type: 'string', multiple: true },
    quick: { type: 'boolean', default: false },
  },
});
if (args.base === undefined) {
  console.error(
    'usage: npm run bench:compare -- --base REV [--head REV] [--dialect sqlite|postgres] [--scenario NAME] [--quick]',
  );
  process.exit(2);
}
const seconds = args.quick ? 3 : 10;
const warmupSeconds = args.quick ? 1 : 3;
const connections = 50;
const dialects = (args.dialect ?? ['sqlite', 'postgres']) as Dialect[];

const git = (...argv: string[]) => execFileSync('git', argv, { cwd: repoRoot }).toString().trim();

/** A checkout of `rev` beside the repository, sharing its node_modules (the comparison is of our code). */
function checkout(rev: string): { dir: string; commit: string } {
  const commit = git('rev-parse', '--short', `${rev}^{commit}`);
  const dir = join(tmpdir(), 'cpq-compare', commit);
  if (!existsSync(dir)) {
    progress.phase(`checking out ${commit} into ${dir}`);
    git('worktree', 'add', '--detach', dir, commit);
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  }
  return { dir, commit };
}

function run(cwd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk).slice(-4000);
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new BenchError(`${argv.join(' ')} in ${cwd} exited ${code}:\n${err}`)),
    );
  });
}

// Run inside a checkout with its own modules: every version since the bench began has these exports.
const prepareScript = `
import { sql } from 'kysely';
import { accountId, bulkLoad, generate, mainPlan } from './bench/catalogue.ts';
import { createKey } from './src/keys/keys.service.ts';
import { createTestDatabase } from './test/helpers/database.ts';
const database = await createTestDatabase(process.argv[1]);
const db = database.handle.db;
const seeded = await bulkLoad(db, generate(mainPlan(), 1), () => {}, true);
const { plaintext } = await createKey(db, { accountId, name: 'bench', readOnly: false });
await (database.databaseUrl === null ? sql\`pragma wal_checkpoint(truncate)\` : sql\`vacuum analyze\`).execute(db);
await db.destroy();
process.stdout.write(JSON.stringify({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, key: plaintext, seeded }));
`;

interface Prepared {
  databaseUrl: string | null;
  sqlitePath: string;
  key: string;
  seeded: SeededBundle[];
}

/** The same data for the head: a file copy (SQLite) or a template copy (PostgreSQL), then its own migrations. */
async function copyForHead(base: Prepared, headDir: string): Promise<Prepared> {
  let copy: Prepared;
  if (base.databaseUrl === null) {
    const sqlitePath = base.sqlitePath.replace(/\.sqlite$/, '-head.sqlite');
    copyFileSync(base.sqlitePath, sqlitePath);
    copy = { ...base, sqlitePath };
  } else {
    const baseName = new URL(base.databaseUrl).pathname.slice(1);
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${baseName}_head`;
    await adminQuery(`create database ${baseName}_head template ${baseName}`);
    copy = { ...base, databaseUrl: url.toString() };
  }
  await run(headDir, [cliEntry(headDir).program, 'migrate'], {
    ...process.env,
    DATABASE_URL: copy.databaseUrl ?? '',
    SQLITE_PATH: copy.sqlitePath,
    LOG_LEVEL: 'warn',
  });
  return copy;
}

async function drop(prepared: Prepared): Promise<void> {
  if (prepared.databaseUrl === null) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${prepared.sqlitePath}${suffix}`, { force: true });
  } else {
    await adminQuery(
      `drop database if exists ${new URL(prepared.databaseUrl).pathname.slice(1)} with (force)`,
    );
  }
}

interface Compared {
  name: string;
  title: string;
  /** Over all rounds: requests and seconds summed, the worst p99 of a round. */
  base: Measurement;
  head: Measurement;
  /** head/base req/s of each round. */
  ratios: number[];
  /** CPU milliseconds the service process spent per answered request, over all rounds. */
  cpuMsPerRequest: { base: number; head: number };
  /** head/base CPU per request of each round. */
  cpuRatios: number[];
  failures: number;
}

const rounds = args.quick ? 2 : 4;
const canPin = availableParallelism() >= 2 && existsSync('/usr/bin/taskset');

/** Keeps every thread of a process on one core, where the machine has two and taskset. */
function pin(pid: number, cpu: number): void {
  if (canPin) execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

function merge(a: Measurement, b: Measurement): Measurement {
  const requests = a.requests + b.requests;
  const seconds = a.seconds + b.seconds;
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    p50Ms: Math.max(a.p50Ms, b.p50Ms),
    p99Ms: Math.max(a.p99Ms, b.p99Ms),
    failures: a.failures + b.failures,
    unanswered: a.unanswered + b.unanswered,
    statusCodes: {},
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function compareDialect(dialect: Dialect, baseDir: string, headDir: string): Promise<Compared[]> {
  progress.database(dialect);
  progress.phase('loading the catalogue with the base version');
  const base: Prepared = JSON.parse(
    await run(baseDir, ['--input-type=module', '-e', prepareScript, dialect]),
  );
  progress.phase('copying it for the head and migrating the copy');
  const head = await copyForHead(base, headDir);
  const services: ServiceUnderTest[] = [];
  try {
    progress.phase('starting both services');
    for (const [side, dir] of [
      [base, baseDir],
      [head, headDir],
    ] as const) {
      services.push(
        await ServiceUnderTest.start({
          databaseUrl: side.databaseUrl,
          sqlitePath: side.sqlitePath,
          cwd: dir,
        }),
      );
    }
    const [baseService, headService] = services as [ServiceUnderTest, ServiceUnderTest];
    // One list of scenarios, walked on the base: the ids (the deep page's key among them) are the same on both.
    const scenarios = (await scenariosFor(baseService.baseUrl, base.key, base.seeded)).filter(
      (s) => s.copyOf === undefined && (args.scenario === undefined || args.scenario.includes(s.name)),
    );
    const results: Compared[] = [];
    for (const [i, scenario] of scenarios.entries()) {
      const targets = [baseService, headService].map((service) => targetOf(service, scenario, base.key));
      for (const target of targets) {
        const { status, text } = await call(target);
        if (status < 200 || status > 299 || !scenario.check(JSON.parse(text))) {
          throw new BenchError(
            `${scenario.name} on ${target.url}: unexpected answer ${status}: ${text.slice(0, 500)}`,
          );
        }
      }
      const show = (stage: string) => progress.scenario(i + 1, scenarios.length, scenario.name, stage, true);
      show('waiting until both services are idle');
      await Promise.all(services.map((s) => s.idle()));
      show(`warm-up ${warmupSeconds} s`);
      let failures = (await measureTogether(targets, { connections, seconds: warmupSeconds })).failures;
      const ratios: number[] = [];
      const cpuRatios: number[] = [];
      const cpuTicksSpent = { base: 0, head: 0 };
      let kept: [Measurement, Measurement] | null = null;
      for (let round = 0; round < rounds; round++) {
        // Each service on a core of its own, swapped every round: a noisy neighbour on one core, or a core
        // that is simply slower, weighs on both sides alike over the rounds.
        for (const [side, service] of services.entries()) pin(service.child.pid, (side + round) % 2);
        show(`round ${round + 1} of ${rounds}, ${seconds} s`);
        const ticksBefore = services.map((service) => cpuTicks(service.child.pid));
        const measured = await measureTogether(targets, { connections, seconds });
        const ticks = services.map((service, side) => cpuTicks(service.child.pid) - (ticksBefore[side] ?? 0));
        failures += measured.failures;
        const [b, h] = measured.each as [Measurement, Measurement];
        ratios.push(h.requestsPerSecond / b.requestsPerSecond);
        const [baseTicks = 0, headTicks = 0] = ticks;
        cpuRatios.push(headTicks / h.requests / (baseTicks / b.requests));
        cpuTicksSpent.base += baseTicks;
        cpuTicksSpent.head += headTicks;
        kept = kept === null ? [b, h] : [merge(kept[0], b), merge(kept[1], h)];
      }
      if (kept === null) throw new BenchError('no round measured');
      const [b, h] = kept;
      const ratio = median(ratios);
      // A tick is 10 ms of CPU.
      const cpuMsPerRequest = {
        base: (cpuTicksSpent.base * 10) / b.requests,
        head: (cpuTicksSpent.head * 10) / h.requests,
      };
      progress.done(
        `${scenario.name}: base ${b.requestsPerSecond.toFixed(0)} req/s, ${cpuMsPerRequest.base.toFixed(3)} CPU ms/req; ` +
          `head ${h.requestsPerSecond.toFixed(0)} req/s, ${cpuMsPerRequest.head.toFixed(3)} CPU ms/req; head/base ` +
          `req/s ${ratio.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}), CPU per request ` +
          `${median(cpuRatios).toFixed(2)} (rounds ${cpuRatios.map((r) => r.toFixed(2)).join(', ')})`,
      );
      results.push({
        name: scenario.name,
        title: scenario.title,
        base: b,
        head: h,
        ratios,
        cpuMsPerRequest,
        cpuRatios,
        failures,
      });
    }
    return results;
  } finally {
    progress.phase('stopping the services and dropping the databases');
    await Promise.all(services.map((s) => s.stop()));
    await drop(base);
    await drop(head);
  }
}

function targetOf(service: ServiceUnderTest, scenario: Scenario, key: string) {
  const { method, body } = scenario;
  return {
    url: `${service.baseUrl}${scenario.path}`,
    method,
    body,
    headers: { 'x-api-key': key, ...scenario.headers },
  };
}

const baseSide = checkout(args.base);
const headSide =
  args.head === undefined
    ? { dir: repoRoot, commit: `${git('rev-parse', '--short', 'HEAD')} (working tree)` }
    : checkout(args.head);
const lines = [
  '# cpq: two versions side by side',
  '',
  `Base ${baseSide.commit}, head ${headSide.commit}; \`npm run bench:compare -- ${process.argv.slice(2).join(' ')}\`, ` +
    `started ${new Date().toISOString()}. Both services ran at once on one copy of the same catalogue; each ` +
    `scenario drove both with one autocannon instance (${connections} connections dealt out in turn, ` +
    `${warmupSeconds} s warm-up, then ${rounds} rounds of ${seconds} s), so the ratio head/base is measured under ` +
    `the same load. ${canPin ? 'Each service ran on a core of its own, the cores swapped every round. ' : ''}` +
    'p99 is the worst round; ratios are the median of the rounds, each round listed. CPU per request is the ' +
    "service process's own user and system time over the requests it answered (a database server's work is not " +
    'in it): on a shared machine it moves far less with the neighbours than throughput does.',
  '',
];
let failed = 0;
try {
  for (const dialect of dialects) {
    const compared = await compareDialect(dialect, baseSide.dir, headSide.dir);
    failed += compared.reduce((n, c) => n + c.failures, 0);
    lines.push(
      `## ${dialect}`,
      '',
      ...table(
        [
          { header: 'Scenario' },
          { header: 'base req/s', right: true },
          { header: 'head req/s', right: true },
          { header: 'head/base req/s (rounds)' },
          { header: 'base CPU ms/req', right: true },
          { header: 'head CPU ms/req', right: true },
          { header: 'head/base CPU per req (rounds)' },
          { header: 'base p99 ms', right: true },
          { header: 'head p99 ms', right: true },
        ],
        compared.map((c) => {
          const listed = (ratios: number[]) =>
            `${median(ratios).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')})`;
          return [
            c.title,
            c.base.requestsPerSecond.toFixed(0),
            c.head.requestsPerSecond.toFixed(0),
            listed(c.ratios),
            c.cpuMsPerRequest.base.toFixed(3),
            c.cpuMsPerRequest.head.toFixed(3),
            listed(c.cpuRatios),
            c.base.p99Ms.toFixed(1),
            c.head.p99Ms.toFixed(1),
          ];
        }),
      ),
      '',
    );
  }
} catch (error) {
  progress.done(`!!! comparison stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
if (failed > 0) lines.push(`**${failed} requests failed (errors or non-2xx).**`, '');
mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
const markdown = `${lines.join('\n').trimEnd()}\n`;
writeFileSync(join(repoRoot, 'bench', 'results', 'compare.md'), markdown);
process.stdout.write(markdown);
process.exitCode = failed > 0 ? 1 : 0;
