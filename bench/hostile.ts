// Hostile requests beside normal load: the memory and stall cases of the adversarial review, measured rather
// than timed in tests. Normal load (warm details of the large bundle) and a /healthz probe run once alone and once
// with attackers beside them; the service's peak RSS, the probe's latency and the normal load's throughput are
// compared within the run. Every hostile answer must be a bounded 4xx, a 503 from the heavy-answer gate, or a 200
// within the byte budget: anything else (a 500, a dropped connection) fails the run.
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { type Measurement, measure, type Target } from './load.ts';
import { peakRss, residentSetSize, type ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';

export interface Attack {
  name: string;
  title: string;
  /** Requests answered, by status. */
  statusCodes: Record<string, number>;
  /** Largest answer body seen, in bytes. */
  largestAnswerBytes: number;
  /** Transport errors (refused, reset, timed out). */
  errors: number;
}

export interface Latencies {
  samples: number;
  /** Probes that got no 200 (an error status, a refused or timed-out connection). */
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HostileResult {
  seconds: number;
  alone: { normal: Measurement; healthz: Latencies };
  beside: { normal: Measurement; healthz: Latencies };
  attacks: Attack[];
  /** Clients that sent a request with a large error answer and never read it. */
  unreadClients: number;
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** Answers outside what the service promises (see the header comment). */
  failures: number;
}

const normalConnections = 20;
const detailsAttackers = 8;
const quoteAttackers = 4;
const unreadClients = Number(process.env.CPQ_BENCH_UNREAD ?? 16);
const bundlesPerAttack = 100;
const propertiesPerAttack = 200;
/** 698 KB of `1,`: one schema error per element, as in the review. */
const hostileArrayItems = 349_000;

export function latencies(samples: number[]): Omit<Latencies, 'failures'> {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { samples: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? Number.NaN };
}

/**
 * /healthz (or another cheap read) one request at a time until `stop` settles (bench/health-probe.ts): how long a
 * cheap request waits.
 */
export async function probeHealth(
  baseUrl: string,
  stop: Promise<unknown>,
  read: { path?: string; headers?: Record<string, string>; intervalMs?: number } = {},
): Promise<Latencies> {
  const probe = new Worker(new URL('./health-probe.ts', import.meta.url), {
    workerData: { baseUrl, ...read },
  });
  const answer = new Promise<{ samples: number[]; failures: number }>((resolve, reject) => {
    probe.once('message', resolve);
    probe.once('error', reject);
  });
  await stop;
  probe.postMessage('stop');
  const { samples, failures } = await answer;
  await probe.terminate();
  return { ...latencies(samples), failures };
}

interface AttackPlan {
  name: string;
  title: string;
  attackers: number;
  /** A new request each time: details attacks vary `at` so that no answer comes from the cache. */
  request: (n: number) => { url: string; init: RequestInit };
  allowed: (status: number) => boolean;
}

async function runAttack(plan: AttackPlan, stop: Promise<unknown>): Promise<Attack> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const attack: Attack = {
    name: plan.name,
    title: plan.title,
    statusCodes: {},
    largestAnswerBytes: 0,
    errors: 0,
  };
  let sent = 0;
  const attacker = async () => {
    while (!stopped) {
      const { url, init } = plan.request(sent++);
      try {
        const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
        const body = await response.arrayBuffer();
        attack.statusCodes[response.status] = (attack.statusCodes[response.status] ?? 0) + 1;
        attack.largestAnswerBytes = Math.max(attack.largestAnswerBytes, body.byteLength);
        // A 503 from the gate says when to come back; an attacker does not wait, a client would.
        if (response.status === 503) await new Promise((resolve) => setTimeout(resolve, 100));
      } catch {
        attack.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: plan.attackers }, attacker));
  return attack;
}

/** Clients that send a request whose answer is a large problem document and never read a byte of it. */
function openUnreadClients(baseUrl: string, key: string, body: string): Socket[] {
  const { hostname, port } = new URL(baseUrl);
  return Array.from({ length: unreadClients }, () => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    socket.write(
      `POST /v1/quotes/price HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    return socket;
  });
}

export async function measureHostile(
  service: ServiceUnderTest,
  key: string,
  bundleIds: { large: string[]; typical: string[] },
  normal: Target,
  seconds: number,
): Promise<HostileResult> {
  const { baseUrl } = service;
  const headers = { 'x-api-key': key };
  const ids = [...bundleIds.large, ...bundleIds.typical].slice(0, bundlesPerAttack).join(',');
  const properties = Array.from({ length: propertiesPerAttack }, (_, i) => `hostile-property-${i}`).join(',');
  const instant = (n: number) => encodeURIComponent(new Date(Date.UTC(2020, 0, 1) + n * 1000).toISOString());
  const quoteBody = JSON.stringify({ currency: 'USD', bundles: new Array(hostileArrayItems).fill(1) });
  const gateOrBudget = (status: number) => status === 200 || status === 422 || status === 503;
  const plans: AttackPlan[] = [
    {
      name: 'details-100-properties',
      title: `GET /v1/bundles-details, ${bundlesPerAttack} bundles, ${propertiesPerAttack} properties, new \`at\` each`,
      attackers: detailsAttackers / 2,
      request: (n) => ({
        url: `${baseUrl}/v1/bundles-details?bundleIds=${ids}&properties=${properties}&at=${instant(n)}`,
        init: { headers },
      }),
      allowed: gateOrBudget,
    },
    {
      name: 'details-100-bundles',
      title: `GET /v1/bundles-details, ${bundlesPerAttack} bundles, new \`at\` each`,
      attackers: detailsAttackers / 2,
      request: (n) => ({
        url: `${baseUrl}/v1/bundles-details?bundleIds=${ids}&at=${instant(n)}`,
        init: { headers },
      }),
      allowed: gateOrBudget,
    },
    {
      name: 'quote-349k-items',
      title: `POST /v1/quotes/price, ${(quoteBody.length / 1000).toFixed(0)} KB body of ${hostileArrayItems.toLocaleString('en-US')} bad items`,
      attackers: quoteAttackers,
      request: () => ({
        url: `${baseUrl}/v1/quotes/price`,
        init: {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: quoteBody,
        },
      }),
      allowed: (status) => status === 400,
    },
  ];
  const only = process.env.CPQ_BENCH_ATTACKS?.split(',');
  if (only) plans.splice(0, plans.length, ...plans.filter((p) => only.includes(p.name)));
  const load = { connections: normalConnections, seconds };

  await service.idle();
  progress.phase(`hostile: normal load alone, ${seconds} s`);
  let finish = (_: unknown) => {};
  let stop = new Promise((resolve) => {
    finish = resolve;
  });
  const aloneHealth = probeHealth(baseUrl, stop);
  const aloneNormal = await measure(normal, load);
  finish(undefined);
  const alone = { normal: aloneNormal, healthz: await aloneHealth };

  await service.idle();
  service.resetPeak();
  const rssBeforeBytes = residentSetSize(service.child.pid);
  progress.phase(
    `hostile: normal load beside ${plans.length} attacks and ${unreadClients} unread clients, ${seconds} s`,
  );
  stop = new Promise((resolve) => {
    finish = resolve;
  });
  const sockets = openUnreadClients(baseUrl, key, quoteBody);
  const attacks = plans.map((plan) => runAttack(plan, stop));
  const besideHealth = probeHealth(baseUrl, stop);
  const besideNormal = await measure(normal, load);
  finish(undefined);
  const attacked = await Promise.all(attacks);
  const beside = { normal: besideNormal, healthz: await besideHealth };
  const peakRssBytes = peakRss(service.child.pid);
  for (const socket of sockets) socket.destroy();

  const failures =
    attacked.reduce(
      (n, attack, i) =>
        n +
        attack.errors +
        Object.entries(attack.statusCodes)
          .filter(([status]) => !plans[i]?.allowed(Number(status)))
          .reduce((m, [, count]) => m + count, 0),
      0,
    ) +
    alone.normal.failures +
    beside.normal.failures +
    alone.healthz.failures +
    beside.healthz.failures;
  for (const attack of attacked) {
    progress.done(
      `hostile ${attack.name}: ${JSON.stringify(attack.statusCodes)}, largest answer ${attack.largestAnswerBytes} B, ` +
        `${attack.errors} errors`,
    );
  }
  progress.done(
    `hostile: /healthz p99 ${alone.healthz.p99Ms.toFixed(1)} ms alone, ${beside.healthz.p99Ms.toFixed(1)} ms beside; ` +
      `normal ${alone.normal.requestsPerSecond.toFixed(0)} -> ${beside.normal.requestsPerSecond.toFixed(0)} req/s; ` +
      `peak RSS ${(peakRssBytes / 1e6).toFixed(0)} MB`,
  );
  return {
    seconds,
    alone,
    beside,
    attacks: attacked,
    unreadClients,
    rssBeforeBytes,
    peakRssBytes,
    failures,
  };
}
