// Drives a target with autocannon. Latencies are taken from every response at full (sub-millisecond)
// resolution: autocannon's own histogram keeps whole milliseconds, too coarse for a 1-product bundle.
import autocannon from 'autocannon';

export interface Target {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  /** Bodies sent in turn on each connection, in place of `body` (with one target only). */
  bodies?: string[];
}

export interface Measurement {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection errors (timeouts among them) and responses outside 2xx. */
  failures: number;
  /** Sent but not answered when the run ended: at most one per connection unless the service falls behind. */
  unanswered: number;
  statusCodes: Record<string, number>;
}

export interface Run {
  connections: number;
  seconds: number;
  onSecond?: (elapsed: number, requestsPerSecond: number) => void;
  /** Where every latency of the run is added too (one target only): runs in rounds merge theirs. */
  latencies?: number[];
}

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** A target as autocannon's client options name it: two services on one path differ by port. */
const targetKey = (port: string | number, path: string) => `${port} ${path}`;
const keyOf = (url: string) => {
  const { port, pathname, search } = new URL(url);
  return targetKey(port, `${pathname}${search}`);
};

/**
 * Drives several targets (method, headers and body of the first) with one autocannon instance, its connections
 * dealt out in turn, so that each target sees the same service and the same machine at the same moment.
 * Connection errors and unanswered requests cannot be told apart by target: they are counted for the whole run.
 */
export async function measureTogether(
  targets: Target[],
  run: Run,
): Promise<{ each: Measurement[]; failures: number }> {
  const [first] = targets;
  if (!first) throw new Error('nothing to measure');
  const seen = new Map(
    targets.map((t) => [keyOf(t.url), { latencies: [] as number[], codes: new Map<number, number>() }]),
  );
  const instance = autocannon({
    url: targets.map((t) => t.url),
    method: first.method ?? 'GET',
    headers: {
      ...first.headers,
      ...(first.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: first.body,
    ...(first.bodies === undefined ? {} : { requests: first.bodies.map((body) => ({ body })) }),
    connections: run.connections,
    duration: run.seconds,
    timeout: 10,
    // Each scenario's answer is checked once before it is driven. Left as it is, autocannon appends every body to
    // a string, decoding it as UTF-8: for a compressed answer that decoding cost the load generator several times
    // what the service spent on it, and its latencies were the load generator's.
    setupClient: (client) => {
      client.pipelinedRequests.addBody = () => {};
    },
  });
  let elapsed = 0;
  let answered = 0;
  instance.on('response', (client, status, _bytes, ms) => {
    const target = seen.get(targetKey(client.opts.port, client.opts.path));
    target?.latencies.push(ms);
    run.latencies?.push(ms);
    target?.codes.set(status, (target.codes.get(status) ?? 0) + 1);
    answered++;
  });
  instance.on('tick', ({ counter }) => {
    elapsed++;
    run.onSecond?.(elapsed, counter);
  });
  const result = await instance;
  const unanswered = result.requests.sent - answered - result.errors;
  const each = targets.map((t): Measurement => {
    const { latencies, codes } = seen.get(keyOf(t.url)) ?? { latencies: [], codes: new Map() };
    const sorted = Float64Array.from(latencies).sort();
    const outside2xx = [...codes].reduce(
      (n, [code, count]) => n + (code >= 200 && code < 300 ? 0 : count),
      0,
    );
    return {
      requests: latencies.length,
      seconds: result.duration,
      requestsPerSecond: latencies.length / result.duration,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      failures: outside2xx + (targets.length === 1 ? result.errors : 0),
      unanswered,
      statusCodes: Object.fromEntries(codes),
    };
  });
  return { each, failures: result.errors + result.non2xx };
}

export async function measure(target: Target, run: Run): Promise<Measurement> {
  const { each } = await measureTogether([target], run);
  return each[0] as Measurement;
}
