// Hard configure requests beside cheap reads (C20): three clients send configure requests on the pigeonhole bundle
// (bench/rules.ts: 10 INCLUDED options of the same 9 products, 90 rules, the hardest the limits allow) without
// pause, each a state not asked before, while /healthz and an unrelated bundle are read one request at a time. The
// reads must stay prompt and never fail, every hard request must be answered 200 or 422 configuration_too_complex
// within three budgets (CONFIGURE_BUDGET_MS, default 1000 ms), and a small configure after them must be prompt.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Latencies, latencies, probeHealth } from './hostile.ts';
import { peakRss, resetPeakRss, residentSetSize, type ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';
import { p99LimitMs, rssLimitBytes, type Target } from './report.ts';
import { pigeonholeOptions, pigeonholeRules } from './rules.ts';
import { BenchError, callOk } from './scenarios.ts';

export interface ConfigureHardResult {
  seconds: number;
  budgetMs: number;
  /** Hard requests answered, by status; transport errors apart. */
  statusCodes: Record<string, number>;
  errors: number;
  hard: Omit<Latencies, 'failures'>;
  healthz: Latencies;
  read: Latencies;
  /** The same reads for as long before, with no configure running: what the machine gives them alone. */
  alone: { healthz: Latencies; read: Latencies };
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** A small configure (the configure scenario's first state) right after. */
  nextSmallMs: number;
}

const PIGEONS = 10;
const HOLES = 9;
const CLIENTS = 3;

/** Makes the pigeonhole bundle through the API; its id and its options' ids. */
async function createPigeonhole(baseUrl: string, key: string): Promise<{ id: string; optionIds: string[] }> {
  const headers = { 'x-api-key': key };
  const post = (path: string, body: unknown) =>
    callOk({ url: `${baseUrl}${path}`, method: 'POST', headers, body: JSON.stringify(body) });
  const bundle = await post('/v1/bundles', {
    header: { productId: 'PIGEONHOLE', properties: { name: 'Pigeonhole' } },
    isActive: true,
  });
  const optionIds: string[] = [];
  for (const option of pigeonholeOptions(PIGEONS, HOLES)) {
    optionIds.push((await post(`/v1/bundles/${bundle.id}/options`, option)).id);
  }
  for (const rule of pigeonholeRules(optionIds, HOLES)) await post(`/v1/bundles/${bundle.id}/rules`, rule);
  return { id: bundle.id, optionIds };
}

/** /healthz and a bundle read, one request at a time each, until `stop` settles. */
const probeReads = (
  baseUrl: string,
  headers: Record<string, string>,
  readBundleId: string,
  stop: Promise<void>,
) =>
  Promise.all([
    probeHealth(baseUrl, stop, { intervalMs: 10 }),
    probeHealth(baseUrl, stop, { path: `/v1/bundles/${readBundleId}`, headers, intervalMs: 10 }),
  ]);

export async function measureConfigureHard(
  service: ServiceUnderTest,
  key: string,
  options: { seconds: number; budgetMs: number; readBundleId: string; small: { url: string; body: string } },
): Promise<ConfigureHardResult> {
  const { baseUrl } = service;
  progress.phase('configure on the pigeonhole bundle beside reads: creating the bundle');
  const { id, optionIds } = await createPigeonhole(baseUrl, key);
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  progress.phase(`reads alone: ${options.seconds} s`);
  const [aloneHealthz, aloneRead] = await probeReads(
    baseUrl,
    headers,
    options.readBundleId,
    sleep(options.seconds * 1000),
  );
  progress.phase(`configure on the pigeonhole bundle beside reads: ${options.seconds} s`);
  const rssBeforeBytes = residentSetSize(service.child.pid);
  resetPeakRss(service.child.pid);
  let stopped = false;
  const stop = sleep(options.seconds * 1000).then(() => {
    stopped = true;
  });
  const probes = probeReads(baseUrl, headers, options.readBundleId, stop);
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const samples: number[] = [];
  let sent = 0;
  const client = async () => {
    while (!stopped) {
      // Each request rejects another product of another option: a state not asked before, so none is kept.
      const n = sent++;
      const rejections = [
        { optionId: optionIds[n % PIGEONS], productId: `HOLE-${(Math.floor(n / PIGEONS) % HOLES) + 1}` },
        ...(n >= PIGEONS * HOLES
          ? [{ optionId: optionIds[(n + 1) % PIGEONS], productId: `HOLE-${(n % HOLES) + 1}` }]
          : []),
      ];
      const started = performance.now();
      try {
        const response = await fetch(`${baseUrl}/v1/bundles/${id}/configure`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ selections: [], rejections }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as { code?: string };
        const status = response.status === 422 ? `422 ${body.code}` : String(response.status);
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        samples.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const [healthz, read] = await probes;
  const peakRssBytes = peakRss(service.child.pid);
  // A read first, so that the configure is timed on a connection already open.
  await (await fetch(`${baseUrl}/healthz`)).arrayBuffer();
  const started = performance.now();
  const next = await fetch(options.small.url, { method: 'POST', headers, body: options.small.body });
  await next.arrayBuffer();
  if (next.status !== 200)
    throw new BenchError(`the small configure after the hard ones answered ${next.status}`);
  const nextSmallMs = performance.now() - started;
  return {
    seconds: options.seconds,
    budgetMs: options.budgetMs,
    statusCodes,
    errors,
    hard: latencies(samples),
    healthz,
    read,
    alone: { healthz: aloneHealthz, read: aloneRead },
    rssBeforeBytes,
    peakRssBytes,
    nextSmallMs,
  };
}

/** Answers a hard request may get: the right one, or the refusal past the budget. */
const allowed = (status: string) => status === '200' || status === '422 configuration_too_complex';

export function configureHardTargets(result: ConfigureHardResult): Target[] {
  const outside =
    result.errors +
    Object.entries(result.statusCodes).reduce((n, [status, count]) => n + (allowed(status) ? 0 : count), 0);
  const fixed = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  return [
    {
      name: 'configure-hard: /healthz and a bundle read p99 beside 3 hard configures',
      value: `${fixed(result.healthz.p99Ms)} / ${fixed(result.read.p99Ms)} ms`,
      limit: `< ${p99LimitMs} ms`,
      pass: result.healthz.p99Ms < p99LimitMs && result.read.p99Ms < p99LimitMs,
    },
    {
      name: 'configure-hard: peak RSS of the service',
      value: `${(result.peakRssBytes / 1e6).toFixed(0)} MB (before ${(result.rssBeforeBytes / 1e6).toFixed(0)} MB)`,
      limit: `< ${(rssLimitBytes / 1e6).toFixed(0)} MB`,
      pass: result.peakRssBytes < rssLimitBytes,
    },
    {
      name: 'configure-hard: reads failed',
      value: String(result.healthz.failures + result.read.failures),
      limit: '0',
      pass: result.healthz.failures + result.read.failures === 0,
    },
    {
      name: 'configure-hard: slowest hard answer (200 or 422 configuration_too_complex only)',
      value: `${fixed(result.hard.maxMs)} ms, ${outside} other answers`,
      limit: `< ${3 * result.budgetMs} ms, 0`,
      pass: result.hard.maxMs < 3 * result.budgetMs && outside === 0 && result.hard.samples > 0,
    },
    {
      name: 'configure-hard: the next small configure',
      value: `${fixed(result.nextSmallMs)} ms`,
      limit: `< ${p99LimitMs} ms`,
      pass: result.nextSmallMs < p99LimitMs,
    },
  ];
}

export function configureHardSection(result: ConfigureHardResult): string[] {
  const fixed = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const read = (l: Latencies) =>
    `p50 ${fixed(l.p50Ms)} ms, p99 ${fixed(l.p99Ms)} ms, max ${fixed(l.maxMs)} ms (${l.samples} reads, ${l.failures} failed)`;
  return [
    `**Hard configures beside reads** (${result.seconds} s; ${CLIENTS} clients sending configure requests on the ` +
      `pigeonhole bundle of ${PIGEONS} options x ${HOLES} products without pause, each a new state; ` +
      `CONFIGURE_BUDGET_MS ${result.budgetMs})`,
    '',
    `- Hard answers: ${Object.entries(result.statusCodes)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ')}${result.errors > 0 ? `, errors: ${result.errors}` : ''}; ` +
      `p50 ${fixed(result.hard.p50Ms)} ms, max ${fixed(result.hard.maxMs)} ms.`,
    `- /healthz: ${read(result.healthz)}; alone before: ${read(result.alone.healthz)}.`,
    `- GET /v1/bundles/{id}: ${read(result.read)}; alone before: ${read(result.alone.read)}.`,
    `- Service RSS ${(result.rssBeforeBytes / 1e6).toFixed(0)} MB before, peak ${(result.peakRssBytes / 1e6).toFixed(0)} MB.`,
    `- The next small configure: ${fixed(result.nextSmallMs)} ms.`,
    '',
  ];
}
