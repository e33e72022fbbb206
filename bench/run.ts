// `npm run bench [-- --quick] [--dialect sqlite|postgres] [--scenario <name>]... [--profile]`
// Loads a realistic catalogue into a fresh SQLite and a fresh PostgreSQL database, starts the real service on
// each, drives it with autocannon next to the ceiling (a bare node:http server answering the same bytes from
// memory) and writes bench/results/latest.{md,json}. Quick and partial runs write scratch.{md,json} instead.
// --scenario runs only the named load scenarios (no growth series); --profile writes a CPU profile of the
// service into bench/profiles/ and prints where its time went.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { Dialect } from '../src/db/database.ts';
import { createKey } from '../src/keys/keys.service.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/database.ts';
import {
  accountId,
  type BundlePlan,
  bulkLoad,
  generate,
  mainPlan,
  plannedRows,
  type SeededBundle,
  searchPlan,
  tinyPlan,
} from './catalogue.ts';
import { type CatalogueFileResult, measureCatalogueFile } from './catalogue-file.ts';
import { configureHardTargets, measureConfigureHard } from './configure-hard.ts';
import { measureHostile } from './hostile.ts';
import { measure, measureTogether, percentile, type Target } from './load.ts';
import {
  type Child,
  cpuTicks,
  peakRss,
  proportionalSetSize,
  repoRoot,
  resetPeakRss,
  residentSetSize,
  ServiceUnderTest,
  startCeiling,
} from './processes.ts';
import { summarizeProfiles } from './profile-summary.ts';
import { progress } from './progress.ts';
import { measureFinalize } from './quotes.ts';
import {
  catalogueFileTargets,
  type DatabaseResult,
  evaluateTargets,
  type GrowthPoint,
  hostileTargets,
  type Results,
  type ScenarioResult,
  toMarkdown,
  type WorkersResult,
} from './report.ts';
import {
  BenchError,
  bodiesOf,
  call,
  configurePath,
  pageSize,
  quoteBody,
  quoteLines,
  type Scenario,
  scenariosFor,
} from './scenarios.ts';
import { measureWebhooks } from './webhooks.ts';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    dialect: { type: 'string', multiple: true },
    scenario: { type: 'string', multiple: true },
    profile: { type: 'boolean', default: false },
  },
});

const settings = args.quick
  ? {
      connections: 50,
      warmupSeconds: 1,
      seconds: 3,
      sequentialWarmupSeconds: 1,
      sequentialSeconds: 2,
      extraBundles: 9_000,
      ceilingRounds: 2,
    }
  : {
      connections: 50,
      warmupSeconds: 3,
      seconds: 10,
      sequentialWarmupSeconds: 1,
      sequentialSeconds: 5,
      extraBundles: 99_000,
      ceilingRounds: 3,
    };
/** The scenarios whose throughput ratio is a target: measured in alternating rounds (measureAlternating). */
const ratioPair = { ceiling: 'ceiling', details: 'details-1-large' };
/** The quote whose throughput against the warm details is a target: in the same alternating rounds. */
const quoteScenario = 'quote-30-lines';
const dialects = (args.dialect ?? ['sqlite', 'postgres']) as Dialect[];
const resultsName =
  args.quick || args.scenario !== undefined || args.dialect !== undefined ? 'scratch' : 'latest';
const resultsDir = join(repoRoot, 'bench', 'results');

function settle(database: TestDatabase): Promise<unknown> {
  // PostgreSQL's autovacuum would analyse tables this size within a minute of the load; doing it now keeps it
  // from landing in the middle of a scenario. SQLite has no such daemon and the service runs no ANALYZE, so its
  // planner is left as a deployment would have it; only the write-ahead log is folded back.
  return database.handle.dialect === 'postgres'
    ? sql`vacuum analyze`.execute(database.handle.db)
    : sql`pragma wal_checkpoint(truncate)`.execute(database.handle.db);
}

async function load(database: TestDatabase, what: string, plan: BundlePlan[], seed: number, keep: boolean) {
  const rows = plannedRows(plan);
  const started = performance.now();
  const seeded = await bulkLoad(
    database.handle.db,
    generate(plan, seed),
    (done) => progress.rows(what, done, rows),
    keep,
  );
  progress.phase(`${what}: analysing`);
  await settle(database);
  return { seeded, rows, seconds: (performance.now() - started) / 1000 };
}

/** Latency of one request at a time: cost without queueing. */
async function sequential(service: ServiceUnderTest, size: number, target: Target): Promise<GrowthPoint> {
  await service.idle();
  await measure(target, { connections: 1, seconds: settings.sequentialWarmupSeconds });
  const { p50Ms, p99Ms, failures } = await measure(target, {
    connections: 1,
    seconds: settings.sequentialSeconds,
  });
  return { size, p50Ms, p99Ms, failures };
}

/** The process a scenario measures (the service, or the ceiling's own) and how to reset its peak RSS. */
interface Subject {
  child: Child;
  resetPeak: () => void;
}

/** What the measured stretches of a scenario add up to: one stretch, or one per round. */
interface Tally {
  requests: number;
  seconds: number;
  ticks: number;
  loadCpuMs: number;
  failures: number;
  unanswered: number;
  latencies: number[];
  statusCodes: Record<string, number>;
  roundsPerSecond: number[];
  /** The measured process's CPU an answer, stretch by stretch: what tells its own cost from the machine's drift. */
  roundsCpuMsPerRequest: number[];
  /** Its RSS as each stretch began: a drop says it gave memory back (its idle collection) in the pause before. */
  roundsRssBeforeBytes: number[];
}

const emptyTally = (): Tally => ({
  requests: 0,
  seconds: 0,
  ticks: 0,
  loadCpuMs: 0,
  failures: 0,
  unanswered: 0,
  latencies: [],
  statusCodes: {},
  roundsPerSecond: [],
  roundsCpuMsPerRequest: [],
  roundsRssBeforeBytes: [],
});

// A tick is 10 ms.
const msOfTicks = (ticks: number) => ticks * 10;

/** One measured stretch of `settings.seconds` on `target`, added to `tally`. */
async function measureInto(
  tally: Tally,
  target: Target,
  subject: Subject,
  onSecond: (elapsed: number, rps: number) => void,
) {
  tally.roundsRssBeforeBytes.push(residentSetSize(subject.child.pid));
  const ticksBefore = cpuTicks(subject.child.pid);
  const loadBefore = process.cpuUsage();
  const m = await measure(target, {
    connections: settings.connections,
    seconds: settings.seconds,
    onSecond,
    latencies: tally.latencies,
  });
  const load = process.cpuUsage(loadBefore);
  const ticks = cpuTicks(subject.child.pid) - ticksBefore;
  tally.ticks += ticks;
  tally.roundsCpuMsPerRequest.push(m.requests > 0 ? msOfTicks(ticks) / m.requests : Number.NaN);
  tally.loadCpuMs += (load.user + load.system) / 1000;
  tally.requests += m.requests;
  tally.seconds += m.seconds;
  tally.failures += m.failures;
  tally.unanswered += m.unanswered;
  for (const [code, count] of Object.entries(m.statusCodes)) {
    tally.statusCodes[code] = (tally.statusCodes[code] ?? 0) + count;
  }
  tally.roundsPerSecond.push(m.requestsPerSecond);
}

function resultOf(
  scenario: Scenario,
  tally: Tally,
  subject: Subject,
  rssBeforeBytes: number,
  warmFailures: number,
  ceilingRps: number | null,
): ScenarioResult {
  const sorted = Float64Array.from(tally.latencies).sort();
  const requestsPerSecond = tally.seconds > 0 ? tally.requests / tally.seconds : 0;
  const result: ScenarioResult = {
    name: scenario.name,
    title: scenario.title,
    requests: tally.requests,
    seconds: tally.seconds,
    requestsPerSecond,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    failures: tally.failures + warmFailures,
    unanswered: tally.unanswered,
    statusCodes: tally.statusCodes,
    peakRssBytes: peakRss(subject.child.pid),
    rssBeforeBytes,
    ratioToCeiling: ceilingRps === null ? null : requestsPerSecond / ceilingRps,
    cpuMsPerRequest: tally.requests > 0 ? msOfTicks(tally.ticks) / tally.requests : undefined,
    loadCpuMsPerRequest: tally.requests > 0 ? tally.loadCpuMs / tally.requests : undefined,
  };
  progress.done(
    `${scenario.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, ` +
      `p99 ${result.p99Ms.toFixed(2)} ms, ${result.failures} errors/non-2xx, ${result.unanswered} unanswered`,
  );
  if (result.failures > 0) {
    progress.done(
      `!!! ${scenario.name}: status codes ${JSON.stringify(result.statusCodes)}\n${subject.child.output()}`,
    );
  }
  return result;
}

/** A scenario as planned: what it sends, to which process. */
interface Planned {
  scenario: Scenario;
  target: Target;
  subject: Subject;
}

/** One scenario of the alternating rounds, with what its rounds add up. */
type Side = Planned & { rssBeforeBytes: number; warmFailures: number; tally: Tally };

/**
 * The ceiling and the scenarios whose throughput against another is a target, measured in `rounds` alternating
 * rounds after one warm-up each (ceiling, details, quote, ceiling, ...), their stretches added up: the shared
 * machine drifts from one minute to the next (a run saw the ceiling at 4,237 req/s, then at 2,500 twenty seconds
 * later; another, the same quote at 0.194 and then 0.294 ms of CPU an answer), so a ratio of two runs in a row
 * says as much about the drift as about them. The results come in the order of `planned`; `tallies[i]` is side
 * i's, with its readings round by round.
 */
async function measureAlternating(
  planned: [ceiling: Planned, ...measured: Planned[]],
  rounds: number,
  position: { index: number; total: number },
  settle: () => Promise<void>,
): Promise<{ results: ScenarioResult[]; tallies: Tally[] }> {
  const names = planned.map((side) => side.scenario.name).join(', ');
  const show = (text: string, first = false) =>
    progress.scenario(position.index, position.total, names, text, first);
  show('waiting until the service is idle', true);
  await settle();
  const sides: Side[] = [];
  for (const side of planned) {
    show(`warm-up ${settings.warmupSeconds} s, ${side.scenario.name}`, true);
    const rssBeforeBytes = residentSetSize(side.subject.child.pid);
    const warm = await measure(side.target, {
      connections: settings.connections,
      seconds: settings.warmupSeconds,
    });
    sides.push({ ...side, rssBeforeBytes, warmFailures: warm.failures, tally: emptyTally() });
  }
  for (const side of sides) side.subject.resetPeak();
  for (let round = 1; round <= rounds; round++) {
    for (const side of sides) {
      // Each stretch starts from a service at rest: the quote's garbage is not left for the details after it. The
      // service is quiet through the ceiling's stretch, so one longer than IDLE_COLLECT_MS sees its idle collection.
      await settle();
      await measureInto(side.tally, side.target, side.subject, (elapsed, rps) =>
        show(`round ${round} of ${rounds}, ${side.scenario.name} ${elapsed} s, ${rps} req/s`),
      );
    }
  }
  const resultOfSide = (side: Side, ceilingRps: number | null) =>
    resultOf(side.scenario, side.tally, side.subject, side.rssBeforeBytes, side.warmFailures, ceilingRps);
  const [bare, ...others] = sides as [Side, ...Side[]];
  const ceiling = resultOfSide(bare, null);
  return {
    results: [ceiling, ...others.map((side) => resultOfSide(side, ceiling.requestsPerSecond))],
    tallies: sides.map((side) => side.tally),
  };
}

/** Round by round, the first series' readings over the second's. */
const roundRatios = (over: number[], under: number[]) =>
  over.map((value, i) => value / (under[i] ?? Number.NaN));

async function runScenario(
  { scenario, target, subject }: Planned,
  position: { index: number; total: number },
  ceilingRps: number | null,
  /** Waits until the service has worked off what the scenario before left. */
  settle: () => Promise<void>,
): Promise<ScenarioResult> {
  const show = (text: string, first = false) =>
    progress.scenario(position.index, position.total, scenario.name, text, first);
  show('waiting until the service is idle', true);
  await settle();
  show(`warm-up ${settings.warmupSeconds} s`, true);
  const rssBeforeBytes = residentSetSize(subject.child.pid);
  const warm = await measure(target, {
    connections: settings.connections,
    seconds: settings.warmupSeconds,
    onSecond: (elapsed, rps) => show(`warm-up ${elapsed} s, ${rps} req/s`),
  });
  subject.resetPeak();
  const tally = emptyTally();
  await measureInto(tally, target, subject, (elapsed, rps) => show(`measuring ${elapsed} s, ${rps} req/s`));
  return resultOf(scenario, tally, subject, rssBeforeBytes, warm.failures, ceilingRps);
}

/** What autocannon sends for a scenario to the service at baseUrl, with the key when there is one. */
function targetOf(scenario: Scenario, baseUrl: string, key: string | null): Target {
  const { method, body, bodies, connections } = scenario;
  const headers: Record<string, string> = key === null ? {} : { 'x-api-key': key, ...scenario.headers };
  return { url: `${baseUrl}${scenario.path}`, method, body, bodies, headers, connections };
}

async function runScenarios(
  result: DatabaseResult,
  service: ServiceUnderTest,
  scenarios: Scenario[],
  key: string,
) {
  const copied = scenarios.find((s) => s.copyOf !== undefined)?.copyOf;
  let ceiling: Child | null = null;
  if (copied) {
    const answer = await fetch(`${service.baseUrl}${copied}`, { headers: { 'x-api-key': key } });
    ceiling = await startCeiling(Buffer.from(await answer.arrayBuffer()));
  }
  const onService: Subject = { child: service.child, resetPeak: () => service.resetPeak() };
  const planned = scenarios.map((scenario): Planned => {
    if (scenario.copyOf === undefined || ceiling === null) {
      return { scenario, target: targetOf(scenario, service.baseUrl, key), subject: onService };
    }
    const bare = ceiling;
    // The ceiling serves its bytes to anyone: no key, no other headers.
    const subject = { child: bare, resetPeak: () => resetPeakRss(bare.pid) };
    return { scenario, target: targetOf(scenario, bare.baseUrl, null), subject };
  });
  try {
    for (const { scenario, target } of planned) {
      for (const body of bodiesOf(target)) {
        const { status, text, encoding } = await call({ ...target, body });
        if (status < 200 || status > 299 || !scenario.check(scenario.raw ? text : JSON.parse(text))) {
          throw new BenchError(`${scenario.name}: unexpected answer ${status}: ${text.slice(0, 2000)}`);
        }
        if (scenario.encoding !== undefined && encoding !== scenario.encoding) {
          throw new BenchError(
            `${scenario.name}: answered in ${encoding ?? 'no coding'}, not ${scenario.encoding}`,
          );
        }
      }
    }
    let ceilingRps: number | null = null;
    const settleService = () => service.idle();
    const named = (name: string) => planned.find((p) => p.scenario.name === name);
    const [bare, details, quote] = [named(ratioPair.ceiling), named(ratioPair.details), named(quoteScenario)];
    for (const [i, plan] of planned.entries()) {
      const position = { index: i + 1, total: planned.length };
      if (bare && details && (plan === details || plan === quote)) continue;
      if (plan === bare && details) {
        const { results, tallies } = await measureAlternating(
          quote ? [bare, details, quote] : [bare, details],
          settings.ceilingRounds,
          position,
          settleService,
        );
        result.scenarios.push(...results);
        ceilingRps = (results[0] as ScenarioResult).requestsPerSecond;
        const [ceilingTally, detailsTally, quoteTally] = tallies as [Tally, Tally, Tally | undefined];
        result.ceilingRounds = {
          rounds: settings.ceilingRounds,
          seconds: settings.seconds,
          ratios: roundRatios(detailsTally.roundsPerSecond, ceilingTally.roundsPerSecond),
          cpuRatios: roundRatios(detailsTally.roundsCpuMsPerRequest, ceilingTally.roundsCpuMsPerRequest),
          serviceRssBeforeBytes: detailsTally.roundsRssBeforeBytes,
          ...(quoteTally
            ? {
                quoteRatios: roundRatios(quoteTally.roundsPerSecond, detailsTally.roundsPerSecond),
                quoteCpuRatios: roundRatios(
                  quoteTally.roundsCpuMsPerRequest,
                  detailsTally.roundsCpuMsPerRequest,
                ),
              }
            : {}),
        };
        continue;
      }
      const measured = await runScenario(plan, position, ceilingRps, settleService);
      if (plan === bare) ceilingRps = measured.requestsPerSecond;
      result.scenarios.push(measured);
    }
  } finally {
    await ceiling?.stop();
  }
  const page = (name: string) => planned.find((p) => p.scenario.name === name)?.target;
  const first = page('list-first-page');
  const deep = page('list-deep-page');
  if (first && deep) result.pagination = await sideBySide(service, first, deep);
}

/**
 * The first and the deep page driven together, their connections interleaved: whatever the shared machine does
 * meanwhile, both pages see it, so their ratio does not drift with it as two runs in a row would.
 */
async function sideBySide(service: ServiceUnderTest, first: Target, deep: Target) {
  await service.idle();
  const load = { connections: settings.connections };
  progress.phase(`first and deep page side by side: warm-up ${settings.warmupSeconds} s`);
  const warm = await measureTogether([first, deep], { ...load, seconds: settings.warmupSeconds });
  progress.phase(`first and deep page side by side: measuring ${settings.seconds} s`);
  const { each, failures } = await measureTogether([first, deep], { ...load, seconds: settings.seconds });
  const [firstPage, deepPage] = each;
  if (!firstPage || !deepPage) throw new BenchError('side-by-side pages measured nothing');
  return { firstPage, deepPage, failures: failures + warm.failures };
}

/** The scenarios measured on one worker and on two (`cpq serve --workers 2`). */
const workerScenarios = ['details-1-large', 'list-first-page', 'quote-30-lines', 'configure'];

/**
 * One worker against two: a second service, `serve --workers 2` on the same database, and each scenario driven on
 * the one-process service then on it, back to back, so that both see the machine as it is at that moment.
 */
async function measureWorkers(
  service: ServiceUnderTest,
  scenarios: Scenario[],
  key: string,
): Promise<WorkersResult> {
  progress.phase('starting the service with 2 workers');
  const workers = await ServiceUnderTest.start({ ...service.options, cpuProfileDir: undefined, workers: 2 });
  const chosen = scenarios.filter((s) => workerScenarios.includes(s.name));
  try {
    // Every worker has finished starting once the processes are idle.
    await workers.idle();
    const result: WorkersResult = {
      count: 2,
      startRssBytes: residentSetSize(workers.child.pid),
      startPssBytes: proportionalSetSize(workers.child.pid),
      pairs: [],
    };
    for (const [i, scenario] of chosen.entries()) {
      const measured = [];
      for (const [side, subject] of [service, workers].entries()) {
        const target = targetOf(scenario, subject.baseUrl, key);
        const position = { index: 2 * i + side + 1, total: 2 * chosen.length };
        const on = { child: subject.child, resetPeak: () => subject.resetPeak() };
        measured.push(
          await runScenario({ scenario, target, subject: on }, position, null, () => subject.idle()),
        );
      }
      const [one, two] = measured;
      if (one && two) result.pairs.push({ one, two });
    }
    return result;
  } finally {
    progress.phase('stopping the service with 2 workers');
    await workers.stop();
  }
}

/** The attacks of bench/hostile.ts on the large bundles (then typical ones), beside warm details of one. */
function hostileBeside(service: ServiceUnderTest, key: string, seeded: SeededBundle[]) {
  const active = (kind: SeededBundle['kind']) =>
    seeded.filter((b) => b.kind === kind && b.isActive).map((b) => b.id);
  const large = active('large');
  const normal = {
    url: `${service.baseUrl}/v1/bundles-details?bundleIds=${large[0]}`,
    headers: { 'x-api-key': key },
  };
  return measureHostile(service, key, { large, typical: active('typical') }, normal, settings.seconds);
}

/** Hard configure requests beside reads of a typical bundle; then the configure scenario's first state, searched. */
function configureHardBeside(
  service: ServiceUnderTest,
  key: string,
  configure: Scenario,
  seeded: SeededBundle[],
) {
  const readBundle = seeded.find((b) => b.kind === 'typical' && b.isActive);
  const first = configure.bodies?.[0] ?? configure.body;
  if (!readBundle || first === undefined) throw new BenchError('no typical bundle or configure state to use');
  return measureConfigureHard(service, key, {
    seconds: settings.seconds,
    budgetMs: 1000,
    readBundleId: readBundle.id,
    // Two of the bundle: a state not kept yet, so it is searched in a thread.
    small: {
      url: `${service.baseUrl}${configure.path}`,
      body: JSON.stringify({ ...JSON.parse(first), quantity: 2 }),
    },
  });
}

/** A service like `service` that keeps no configure outcome, so that every configure request is searched. */
function startSearching(service: ServiceUnderTest): Promise<ServiceUnderTest> {
  return ServiceUnderTest.start({
    ...service.options,
    cpuProfileDir: undefined,
    env: { CONFIGURE_ANSWERS_KEPT: '0' },
  });
}

/**
 * The configure scenario again, on a service that keeps no outcome (CONFIGURE_ANSWERS_KEPT=0): the service
 * measured keeps the outcome of each state once searched, as deployed, so after its first round of the clicks it
 * searches none; this row is every click searched.
 */
async function configureSearched(
  service: ServiceUnderTest,
  configure: Scenario,
  key: string,
): Promise<ScenarioResult> {
  progress.phase('starting a service that keeps no configure outcome (CONFIGURE_ANSWERS_KEPT=0)');
  const searching = await startSearching(service);
  try {
    const scenario: Scenario = {
      ...configure,
      name: 'configure-searched',
      title: `${configure.title}, each searched (CONFIGURE_ANSWERS_KEPT=0)`,
    };
    const subject = { child: searching.child, resetPeak: () => searching.resetPeak() };
    const plan = { scenario, target: targetOf(scenario, searching.baseUrl, key), subject };
    return await runScenario(plan, { index: 1, total: 1 }, null, () => searching.idle());
  } finally {
    await searching.stop();
  }
}

/**
 * Configure with nothing chosen (every product's state open, the most work a request asks), one request at a time:
 * by rules on the large shape, and by products with 60 rules. Each request is searched: the series are of the
 * search, on a service that keeps no outcome (the same state asked again would otherwise be answered from memory).
 */
async function measureConfigureGrowth(
  result: DatabaseResult,
  service: ServiceUnderTest,
  key: string,
  seeded: SeededBundle[],
) {
  progress.phase('configure by rules and by products, one request at a time, each searched');
  const searching = await startSearching(service);
  try {
    const bundles = seeded.filter((b) => b.kind === 'configure');
    const target = (bundle: SeededBundle): Target => ({
      url: `${searching.baseUrl}${configurePath(bundle)}`,
      method: 'POST',
      headers: { 'x-api-key': key },
      body: JSON.stringify({ currency: 'USD', selections: [] }),
    });
    for (const bundle of bundles.filter((b) => b.productCount === 300).sort((a, b) => a.rules - b.rules)) {
      result.configureByRules.push(await sequential(searching, bundle.rules, target(bundle)));
    }
    for (const bundle of bundles
      .filter((b) => b.rules === 60)
      .sort((a, b) => a.productCount - b.productCount)) {
      result.configureByProducts.push(await sequential(searching, bundle.productCount, target(bundle)));
    }
  } finally {
    await searching.stop();
  }
}

/** Finalizing quotes of 30 lines on the large bundle, 50 at once (bench/quotes.ts). */
async function finalizeScenario(service: ServiceUnderTest, key: string, seeded: SeededBundle[]) {
  const large = seeded.find((b) => b.kind === 'large' && b.isActive);
  if (!large) throw new BenchError('the catalogue has no large bundle');
  await service.idle();
  const rssBeforeBytes = residentSetSize(service.child.pid);
  const measured = await measureFinalize(
    service.baseUrl,
    key,
    quoteBody(large, quoteLines),
    { warmup: 50 * settings.warmupSeconds, count: 50 * settings.seconds },
    settings.connections,
    (text) => progress.phase(`quote-finalize: ${text}`),
  );
  const result: ScenarioResult = {
    name: 'quote-finalize',
    title: `POST /v1/quotes/{id}/finalize, approved quotes of ${quoteLines} lines, each once`,
    ...measured,
    peakRssBytes: peakRss(service.child.pid),
    rssBeforeBytes,
    ratioToCeiling: null,
  };
  progress.done(
    `quote-finalize: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, ` +
      `p99 ${result.p99Ms.toFixed(2)} ms, ${result.failures} non-200`,
  );
  return result;
}

/**
 * Priced-product search in books of 100 to 10,000 entries, one request at a time (see DatabaseResult): as clients
 * ask, the same search again answered from the service's cache, and built every time by a second service on the
 * same database with its caches off.
 */
async function measureSearchGrowth(
  result: DatabaseResult,
  database: TestDatabase,
  service: ServiceUnderTest,
  key: string,
) {
  const { seeded } = await load(database, 'loading books of 100 to 10,000 entries', searchPlan(), 3, true);
  const headers = { 'x-api-key': key };
  const series = async (measured: ServiceUnderTest, one: GrowthPoint[], broad: GrowthPoint[]) => {
    for (const bundle of seeded) {
      const option = bundle.options[0];
      const named = option?.products[Math.floor(option.products.length / 2)];
      if (!option || !named) throw new BenchError('a search book has no products');
      const url = `${measured.baseUrl}/v1/pricebooks/${option.priceBookId}/pricedProducts?q=`;
      one.push(
        await sequential(measured, bundle.productCount, {
          url: url + encodeURIComponent(named.productId),
          headers,
        }),
      );
      broad.push(await sequential(measured, bundle.productCount, { url: `${url}enterprise`, headers }));
    }
  };
  progress.phase('search by book entries, one request at a time');
  await series(service, result.searchBySize, result.searchBroadBySize);
  progress.phase('search by book entries, built every time (a service with its caches off)');
  const uncached = await ServiceUnderTest.start({
    ...service.options,
    cpuProfileDir: undefined,
    env: { DETAILS_CACHE_BYTES: '0' },
  });
  try {
    await series(uncached, result.searchBuiltBySize, result.searchBroadBuiltBySize);
  } finally {
    await uncached.stop();
  }
}

async function measureGrowth(
  result: DatabaseResult,
  database: TestDatabase,
  service: ServiceUnderTest,
  key: string,
  seeded: SeededBundle[],
) {
  const headers = { 'x-api-key': key };
  progress.phase('details by option products, one request at a time');
  // An explicit instant (the same for every request) makes the service build each answer rather than reuse one.
  const at = encodeURIComponent(new Date().toISOString());
  for (const bundle of seeded.filter((b) => b.kind === 'probe')) {
    const url = `${service.baseUrl}/v1/bundles-details?bundleIds=${bundle.id}`;
    result.detailsBySize.push(await sequential(service, bundle.productCount, { url, headers }));
    const built = { url: `${url}&at=${at}`, headers };
    result.detailsBuiltBySize.push(await sequential(service, bundle.productCount, built));
  }
  const firstPage = { url: `${service.baseUrl}/v1/bundles?limit=${pageSize}`, headers };
  progress.phase(`first page at ${seeded.length.toLocaleString('en-US')} bundles, one request at a time`);
  result.listBySize.push(await sequential(service, seeded.length, firstPage));

  await measureConfigureGrowth(result, service, key, seeded);
  await measureSearchGrowth(result, database, service, key);

  const extra = tinyPlan(settings.extraBundles);
  const what = `loading ${extra.length.toLocaleString('en-US')} tiny bundles`;
  const loaded = await load(database, what, extra, 2, false);
  result.extraLoad = { bundles: extra.length, rows: loaded.rows, seconds: loaded.seconds };
  const total = seeded.length + extra.length;
  progress.phase(`first page at ${total.toLocaleString('en-US')} bundles, one request at a time`);
  result.listBySize.push(await sequential(service, total, firstPage));
}

/** A database's result before anything is measured: every series empty. */
function emptyResult(dialect: Dialect, catalogueFile: CatalogueFileResult | null): DatabaseResult {
  return {
    dialect,
    catalogue: { bundles: 0, rows: 0, seconds: 0 },
    scenarios: [],
    peakRssBytes: 0,
    startRssBytes: 0,
    serviceRestarts: 0,
    pagination: null,
    ceilingRounds: null,
    detailsBySize: [],
    detailsBuiltBySize: [],
    listBySize: [],
    configureByRules: [],
    configureByProducts: [],
    searchBySize: [],
    searchBroadBySize: [],
    searchBuiltBySize: [],
    searchBroadBuiltBySize: [],
    extraLoad: null,
    webhooks: null,
    hostile: null,
    workers: null,
    catalogueFile,
    targets: [],
  };
}

async function benchDatabase(dialect: Dialect): Promise<DatabaseResult> {
  progress.database(dialect);
  const catalogueFile =
    args.scenario === undefined || args.scenario.includes('catalogue-file')
      ? await measureCatalogueFile(dialect)
      : null;
  if (catalogueFile && args.scenario?.every((name) => name === 'catalogue-file')) {
    return { ...emptyResult(dialect, catalogueFile), targets: catalogueFileTargets(catalogueFile) };
  }
  progress.phase('creating a fresh database');
  const database = await createTestDatabase(dialect);
  const profileDir = args.profile
    ? join(repoRoot, 'bench', 'profiles', `${dialect}-${Date.now()}`)
    : undefined;
  try {
    const plan = mainPlan();
    const catalogue = await load(database, 'loading catalogue', plan, 1, true);
    const { plaintext: key } = await createKey(database.handle.db, {
      accountId,
      name: 'bench',
      readOnly: false,
    });
    progress.phase('starting the service');
    const service = await ServiceUnderTest.start({
      databaseUrl: database.databaseUrl,
      sqlitePath: database.sqlitePath,
      cpuProfileDir: profileDir,
    });
    const result: DatabaseResult = {
      ...emptyResult(dialect, catalogueFile),
      catalogue: { bundles: plan.length, rows: catalogue.rows, seconds: catalogue.seconds },
      startRssBytes: service.startRssBytes,
    };
    try {
      progress.phase('checking every scenario once');
      const scenarios = await scenariosFor(service.baseUrl, key, catalogue.seeded);
      await runScenarios(
        result,
        service,
        scenarios.filter((s) => args.scenario === undefined || args.scenario.includes(s.name)),
        key,
      );
      if (args.scenario === undefined || args.scenario.includes('quote-finalize')) {
        result.scenarios.push(await finalizeScenario(service, key, catalogue.seeded));
      }
      const configure = scenarios.find((s) => s.name === 'configure');
      if (configure && (args.scenario === undefined || args.scenario.includes('configure'))) {
        result.scenarios.push(await configureSearched(service, configure, key));
      }
      if (args.scenario === undefined || args.scenario.includes('webhooks')) {
        result.webhooks = await measureWebhooks(service, database, settings);
      }
      if (args.scenario === undefined || args.scenario.includes('hostile')) {
        result.hostile = await hostileBeside(service, key, catalogue.seeded);
      }
      if ((args.scenario === undefined || args.scenario.includes('configure-hard')) && configure) {
        result.configureHard = await configureHardBeside(service, key, configure, catalogue.seeded);
      }
      if (args.scenario === undefined || args.scenario.includes('workers')) {
        result.workers = await measureWorkers(service, scenarios, key);
      }
      if (args.scenario === undefined) await measureGrowth(result, database, service, key, catalogue.seeded);
      else {
        if (args.scenario.includes('configure')) {
          await measureConfigureGrowth(result, service, key, catalogue.seeded);
        }
        if (args.scenario.includes('priced-products-search')) {
          await measureSearchGrowth(result, database, service, key);
        }
      }
    } finally {
      progress.phase('stopping the service');
      await service.stop();
      if (profileDir) progress.done(`CPU profile of the service:\n${summarizeProfiles(profileDir)}`);
    }
    result.serviceRestarts = service.restarts;
    result.peakRssBytes = service.peakRssBytes();
    result.targets = [
      ...evaluateTargets(
        dialect,
        result.scenarios,
        result.pagination,
        { startBytes: result.startRssBytes, peakBytes: result.peakRssBytes },
        { ...ratioPair, quote: quoteScenario },
      ),
      ...(result.hostile ? hostileTargets(result.hostile) : []),
      ...(result.configureHard ? configureHardTargets(result.configureHard) : []),
      ...(catalogueFile ? catalogueFileTargets(catalogueFile) : []),
    ];
    return result;
  } finally {
    progress.phase('dropping the database');
    await database.drop();
  }
}

function machine(): Results['machine'] {
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    kernel: os.release(),
  };
}

/** The commit measured; earlier results, which every run rewrites, do not make the tree count as changed. */
function commit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot }).toString().trim();
  const head = git('rev-parse', '--short', 'HEAD');
  const changed = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results');
  return changed === '' ? head : `${head} (with uncommitted changes)`;
}

const started = new Date();
const results: Results = {
  status: 'ok',
  command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
  startedAt: started.toISOString(),
  seconds: 0,
  machine: machine(),
  commit: commit(),
  settings,
  databases: [],
};
try {
  for (const dialect of dialects) results.databases.push(await benchDatabase(dialect));
} catch (error) {
  progress.done(`!!! benchmark stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
results.seconds = Math.round((Date.now() - started.getTime()) / 1000);
const failed = results.databases.flatMap((db) => {
  const counts: [string, number][] = [
    ...db.scenarios.map((s): [string, number] => [s.name, s.failures]),
    ['first and deep page side by side', db.pagination?.failures ?? 0],
    ...db.detailsBySize.map((p): [string, number] => [`details of ${p.size} products`, p.failures]),
    ...db.detailsBuiltBySize.map((p): [string, number] => [
      `built details of ${p.size} products`,
      p.failures,
    ]),
    ...db.listBySize.map((p): [string, number] => [`first page of ${p.size} bundles`, p.failures]),
    ...(db.webhooks
      ? [...db.webhooks.without, db.webhooks.withEndpoint].map((m): [string, number] => [
          'webhooks price upsert',
          m.failures,
        ])
      : []),
    ['hostile requests beside normal load', db.hostile?.failures ?? 0],
    [
      'reads beside hard configures',
      (db.configureHard?.healthz.failures ?? 0) + (db.configureHard?.read.failures ?? 0),
    ],
    ...(db.workers?.pairs ?? []).flatMap(({ one, two }): [string, number][] => [
      [`${one.name} on 1 worker`, one.failures],
      [`${two.name} on ${db.workers?.count} workers`, two.failures],
    ]),
    ...db.configureByRules.map((p): [string, number] => [`configure with ${p.size} rules`, p.failures]),
    ...db.configureByProducts.map((p): [string, number] => [`configure of ${p.size} products`, p.failures]),
    ...[db.searchBySize, db.searchBroadBySize, db.searchBuiltBySize, db.searchBroadBuiltBySize].flatMap(
      (points) => points.map((p): [string, number] => [`search in a book of ${p.size} entries`, p.failures]),
    ),
  ];
  return counts.filter(([, n]) => n > 0).map(([what, n]) => `${db.dialect} ${what}: ${n}`);
});
if (failed.length > 0) results.status = 'failed';

mkdirSync(resultsDir, { recursive: true });
const markdown = toMarkdown(results);
writeFileSync(join(resultsDir, `${resultsName}.json`), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(resultsDir, `${resultsName}.md`), markdown);
process.stdout.write(markdown);
process.stderr.write(`results: bench/results/${resultsName}.md and .json\n`);
if (failed.length > 0) {
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!! REQUESTS FAILED (errors or non-2xx): ${failed.join('; ')}\n${'!'.repeat(78)}\n`,
  );
  process.exitCode = 1;
}
