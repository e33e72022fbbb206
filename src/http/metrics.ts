import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import type { AnswerGate } from '../shared/heavy-answers.ts';
import { nodeHttp } from './node-http.ts';
import { routeOf } from './route-of.ts';

/** What a cache tells about itself; StampedCache keeps these. */
export interface WatchedCache {
  readonly hits: number;
  readonly misses: number;
  /** Stamp checks that requests joined instead of making their own (SharedReads). */
  readonly sharedStampChecks: number;
  /** Misses answered by a build another request had under way for the same state. */
  readonly sharedBuilds: number;
  readonly bytes: number;
  readonly size: number;
}

/** A gauge read when scraped, for figures owned elsewhere (a queue depth, say). */
export type Reading = () => number | Promise<number>;

export interface Metrics {
  /** Reports a cache's hits, misses and bytes under `name`. */
  watchCache(name: string, cache: WatchedCache): void;
  /** Reports a figure read at scrape time as the gauge `name`. */
  watchGauge(name: string, help: string, read: Reading): void;
  /** Reports how many requests joined a read of `reads` (SharedReads) under `name`. */
  watchSharedReads(name: string, reads: { readonly shared: number }): void;
}

const contentType = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Prometheus metrics of this process, one registry per app (tests build several apps in one process): request
 * durations by route and status, the caches, the heavy-answer gate, the PostgreSQL pool, and Node's own figures.
 * Served at GET /metrics beside the API (no key: it holds no tenant data, only routes and counts), on a port of its
 * own with METRICS_PORT, or not at all with METRICS=off.
 */
export function registerMetrics(
  app: FastifyInstance,
  { config, database, gate }: { config: Config; database: DatabaseHandle; gate: AnswerGate },
): Metrics {
  if (!config.metricsEnabled)
    return { watchCache: () => {}, watchGauge: () => {}, watchSharedReads: () => {} };
  const registry = new Registry();
  const caches = new Map<string, WatchedCache>();
  const sharedReads = new Map<string, { readonly shared: number }>();
  const metrics: Metrics = {
    watchCache: (name, cache) => {
      caches.set(name, cache);
    },
    watchSharedReads: (name, reads) => {
      sharedReads.set(name, reads);
    },
    watchGauge: (name, help, read) => {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await read());
        },
      });
    },
  };

  collectDefaultMetrics({ register: registry });
  const durations = new RequestDurations(
    'cpq_http_request_duration_seconds',
    'Time from receiving a request to sending its answer, by route template and status',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  registry.registerMetric(durations as unknown as Metric);
  app.addHook('onResponse', (request, reply, done) => {
    // Unmatched paths share one label: a client's typos must not grow the series without bound.
    durations.observe(
      request.method,
      routeOf(request).url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  const cacheCounter = (name: string, help: string, read: (cache: WatchedCache) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        // The caches count; the counter only shows their figures, which never go down.
        this.reset();
        for (const [cache, watched] of caches) this.inc({ cache }, read(watched));
      },
    });
  const cacheGauge = (name: string, help: string, read: (cache: WatchedCache) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        for (const [cache, watched] of caches) this.set({ cache }, read(watched));
      },
    });
  cacheCounter('cpq_cache_hits_total', 'Answers served from a cache', (c) => c.hits);
  cacheCounter(
    'cpq_cache_misses_total',
    'Answers a cache did not hold, or held stale, and had built',
    (c) => c.misses,
  );
  cacheCounter(
    'cpq_cache_shared_stamp_checks_total',
    'Requests whose stamp check was one made for other requests for the same bundles at the same moment',
    (c) => c.sharedStampChecks,
  );
  cacheCounter(
    'cpq_cache_shared_builds_total',
    'Answers a cache did not hold, taken from a build another request had under way for the same catalogue state',
    (c) => c.sharedBuilds,
  );
  new Counter({
    name: 'cpq_shared_reads_total',
    help: 'Requests that joined a read made for other requests asking the same thing at the same moment, by read',
    labelNames: ['read'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [read, reads] of sharedReads) this.inc({ read }, reads.shared);
    },
  });
  cacheGauge('cpq_cache_bytes', 'Bytes a cache holds, by its own estimate', (c) => c.bytes);
  cacheGauge('cpq_cache_entries', 'Entries a cache holds', (c) => c.size);
  metrics.watchGauge('cpq_heavy_answers_running', 'Large answers being built now', () => gate.running);
  metrics.watchGauge('cpq_heavy_answers_waiting', 'Large answers waiting for their turn', () => gate.waiting);
  const pool = database.pool;
  if (pool) {
    metrics.watchGauge(
      'cpq_db_pool_connections',
      'Connections the PostgreSQL pool holds',
      () => pool().total,
    );
    metrics.watchGauge('cpq_db_pool_in_use', 'Connections checked out of the pool', () => {
      const { total, idle } = pool();
      return total - idle;
    });
    metrics.watchGauge('cpq_db_pool_waiting', 'Requests waiting for a pool connection', () => pool().waiting);
  }

  const exposition = async () => ({ body: await registry.metrics(), contentType });
  if (config.metricsPort === null) {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const { body } = await exposition();
      return reply.type(contentType).send(body);
    });
  } else {
    serveApart(app, config, exposition);
  }
  return metrics;
}

/** /metrics on METRICS_PORT, opened when the app is ready and closed with it. */
function serveApart(
  app: FastifyInstance,
  config: Config,
  exposition: () => Promise<{ body: string; contentType: string }>,
): void {
  let server: Server | undefined;
  app.addHook('onReady', async () => {
    const apart = nodeHttp.createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404).end();
        return;
      }
      exposition().then(
        ({ body, contentType: type }) => response.writeHead(200, { 'content-type': type }).end(body),
        (error: unknown) => {
          app.log.error({ err: error }, 'metrics could not be collected');
          response.writeHead(500).end();
        },
      );
    });
    server = apart;
    await new Promise<void>((resolve, reject) => {
      apart.once('error', reject);
      apart.listen(config.metricsPort ?? 0, config.host, () => resolve());
    });
  });
  app.addHook('onClose', async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });
}

interface DurationSeries {
  labels: { method: string; route: string; status_code: string };
  /** Answers by the first bucket whose bound they are within; the last counts those over every bound. */
  counts: number[];
  sum: number;
}

/**
 * A Prometheus histogram of request durations by method, route template and status, counted with one Map lookup
 * an answer. prom-client's Histogram.observe builds a label hash and turns bucket bounds into property keys on every
 * call: 3-4% of a warm details answer's CPU in the bench (METRICS=off took details three points nearer the
 * ceiling). Its registry still writes this one out, in the same form as its own histograms (get()).
 */
export class RequestDurations {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, DurationSeries>();

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.#bounds = bounds;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${status} ${method} ${route}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = {
        labels: { method, route, status_code: String(status) },
        counts: new Array<number>(this.#bounds.length + 1).fill(0),
        sum: 0,
      };
      this.#series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.#bounds.length && seconds > (this.#bounds[bucket] as number)) bucket++;
    series.counts[bucket] = (series.counts[bucket] as number) + 1;
    series.sum += seconds;
  }

  /** The samples as prom-client's registry takes them: cumulative buckets up to +Inf, then the sum and count. */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, counts, sum } of this.#series.values()) {
      let cumulative = 0;
      counts.forEach((count, bucket) => {
        cumulative += count;
        values.push({
          labels: { ...labels, le: this.#bounds[bucket] ?? '+Inf' },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: cumulative, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.#series.clear();
  }
}
