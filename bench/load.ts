// Drives a target with autocannon. Latencies are taken from every response at full (sub-millisecond)
// resolution: autocannon's own histogram keeps whole milliseconds, too coarse for a 1-product bundle.
import { connect } from 'node:net';
import autocannon, { type AutocannonClient } from 'autocannon';

export interface Target {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  /** Bodies sent in turn on each connection, in place of `body` (with one target only). */
  bodies?: string[];
  /** Connections to drive it with, where not the run's (a heavy answer measured for its latency). */
  connections?: number;
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

/** One buffer every connection reads into: a read is parsed before the next one can land in it. */
const readBuffer = Buffer.allocUnsafe(256 * 1024);

/**
 * Makes an autocannon client read as little as a client can. Each scenario's answer is checked once before it is
 * driven, so no body is kept: left as it is, autocannon appends every body to a string, decoding it as UTF-8 (for
 * a compressed answer, several times what the service spent on it). And its socket reads into `readBuffer`
 * (`onread`) where Node's default would allocate a new 64 KB buffer for each read and emit it as a stream event:
 * on the large details that cost the load generator 0.25-0.43 ms per answer where the ceiling spent 0.09, took
 * most of the 2 cores the two share, and its collections of those buffers (up to 20 ms each) were in every
 * latency. The same connection handling otherwise: autocannon's `_connect`, with the read changed.
 */
function readLean(client: AutocannonClient): void {
  client.pipelinedRequests.addBody = () => {};
  client._connect = function connectLean(this: AutocannonClient) {
    this.conn = connect({
      port: Number(this.opts.port),
      host: this.opts.hostname,
      onread: {
        buffer: readBuffer,
        callback: (bytes) => {
          this.pipelinedRequests.addByteCount(bytes);
          this.parser.execute(readBuffer.subarray(0, bytes));
          return true;
        },
      },
    });
    this.conn.on('error', (error: Error) => {
      this.emit('connError', error);
      if (!this.destroyed) this._connect();
    });
    this.conn.on('end', () => {
      if (!this.destroyed) this._connect();
    });
    for (let i = 0; i < this.opts.pipelining; i++) this._doRequest();
  };
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
    connections: first.connections ?? run.connections,
    duration: run.seconds,
    timeout: 10,
    setupClient: readLean,
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
