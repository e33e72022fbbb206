// Drives a target with autocannon. Latencies are taken from every response at full (sub-millisecond)
// resolution: autocannon's own histogram keeps whole milliseconds, too coarse for a 1-product bundle.
import autocannon from 'autocannon';

export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
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
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export async function measure(target: Target, run: Run): Promise<Measurement> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: {
      ...target.headers,
      ...(target.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: target.body,
    connections: run.connections,
    duration: run.seconds,
    timeout: 10,
  });
  let elapsed = 0;
  instance.on('response', (_client, _status, _bytes, ms) => {
    latencies.push(ms);
  });
  instance.on('tick', ({ counter }) => {
    elapsed++;
    run.onSecond?.(elapsed, counter);
  });
  const result = await instance;
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]),
  );
  return {
    requests: latencies.length,
    seconds: result.duration,
    requestsPerSecond: latencies.length / result.duration,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    failures: result.errors + result.non2xx,
    unanswered: result.requests.sent - latencies.length - result.errors,
    statusCodes,
  };
}
