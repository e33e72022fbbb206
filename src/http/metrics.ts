import type { Server } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import { AppError } from '../problems.ts';
import type { AnswerGate } from '../shared/heavy-answers.ts';
import { nodeHttp } from '../shared/node-http.ts';
import { packageVersion } from '../version.ts';
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
  /** Counts a webhook attempt by what became of its delivery. */
  webhookAttempt(result: 'delivered' | 'retrying' | 'failed'): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, for what runs beside it in the process (the webhook worker). */
    metrics: Metrics;
  }
}

const contentType = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Prometheus metrics of this process, one registry per app, as tests build several apps in one process. Served
 * without a key (it holds no tenant data, only routes and counts), on a port of its own with METRICS_PORT, or not
 * at all with METRICS=off.
 */
export function registerMetrics(
  app: FastifyInstance,
  { config, database, gate }: { config: Config; database: DatabaseHandle; gate: AnswerGate },
): Metrics {
  if (!config.metricsEnabled) {
    const none: Metrics = {
      watchCache: () => {},
      watchGauge: () => {},
      watchSharedReads: () => {},
      webhookAttempt: () => {},
    };
    app.decorate('metrics', none);
    return none;
  }
  const registry = new Registry();
  const webhookAttempts = new Counter({
    name: 'cpq_webhook_deliveries_total',
    help: 'Webhook attempts, by what became of the delivery: delivered, retrying (failed, tried again later) or failed (given up)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const caches = new Map<string, WatchedCache>();
  const sharedReads = new Map<string, { readonly shared: number }>();
  const metrics: Metrics = {
    watchCache: (name, cache) => {
      caches.set(name, cache);
    },
    watchSharedReads: (name, reads) => {
      sharedReads.set(name, reads);
    },
    webhookAttempt: (result) => webhookAttempts.inc({ outcome: result }),
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

  app.decorate('metrics', metrics);
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'cpq_build_info',
    help: 'Always 1; the version of cpq this process runs, as a label',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: packageVersion }, 1);
  countOutcomes(app, registry);
  const durations = new Histogram({
    name: 'cpq_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by route template and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    // Unmatched paths share one label: a client's typos must not grow the series without bound.
    durations.observe(
      { method: request.method, route: routeOf(request).url ?? 'unmatched', status_code: reply.statusCode },
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

/** The routes whose answers are counted by outcome, by what their route and status (or problem) say. */
const outcomeRoutes: Record<string, (reply: FastifyReply, problem: AppError | undefined) => string> = {
  'POST /v1/quotes/price': (reply) => byStatus(reply.statusCode, 'priced', 'invalid'),
  'POST /v1/bundles/:bundleId/configure': (reply, problem) =>
    problem?.code === 'configuration_too_complex'
      ? 'too_complex'
      : byStatus(reply.statusCode, configureValidity.get(reply) ? 'valid' : 'invalid', 'refused'),
  'POST /v1/catalogue/apply': (reply) =>
    byStatus(
      reply.statusCode,
      (reply.request.query as { dryRun?: boolean }).dryRun ? 'planned' : 'applied',
      'rejected',
    ),
};

function byStatus(status: number, ok: string, unprocessable: string): string {
  if (status < 300) return ok;
  if (status === 422) return unprocessable;
  return status < 500 ? 'refused' : 'failed';
}

/** Whether a configure answer said `valid`, read from its first bytes. */
const configureValidity = new WeakMap<FastifyReply, boolean>();
const validPrefix = Buffer.from('{"valid":true');

/**
 * Business counters, counted at the edge from each answer's route and status (and the problem of an error), so
 * the services stay free of them: quotes priced, configure answers, rule violations, catalogue applies, requests
 * refused by the rate limit. Only the routes counted get the hooks.
 */
function countOutcomes(app: FastifyInstance, registry: Registry): void {
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const totals: Record<string, Counter> = {
    'POST /v1/quotes/price': counter(
      'cpq_quotes_priced_total',
      'Quotes asked for, by outcome: priced, invalid (422: broken rules or unknown references), refused (another 4xx), failed (5xx)',
      ['outcome'],
    ),
    'POST /v1/bundles/:bundleId/configure': counter(
      'cpq_configure_answers_total',
      'Configure answers, by outcome: valid, invalid (no valid configuration extends the request), too_complex (422 configuration_too_complex), refused, failed',
      ['outcome'],
    ),
    'POST /v1/catalogue/apply': counter(
      'cpq_catalogue_applies_total',
      'Catalogue files sent to POST /v1/catalogue/apply, by outcome: applied, planned (dryRun), rejected (422: the file has problems), refused, failed',
      ['outcome'],
    ),
  };
  const violations = counter(
    'cpq_rule_violations_total',
    'Broken configuration rules found in the quotes asked for (each rule_violated item of a 422)',
  );
  const rateLimited = counter('cpq_rate_limited_total', 'Requests refused with 429 rate_limited');
  const problems = new WeakMap<FastifyRequest, AppError>();

  app.addHook('onResponse', (_request, reply, done) => {
    if (reply.statusCode === 429) rateLimited.inc();
    done();
  });
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url}`;
      const outcome = outcomeRoutes[key];
      const total = totals[key];
      if (outcome === undefined || total === undefined) continue;
      route.onError = [
        ...[route.onError ?? []].flat(),
        (request, _reply, error, done) => {
          if (error instanceof AppError) problems.set(request, error);
          done();
        },
      ];
      if (key === 'POST /v1/bundles/:bundleId/configure') {
        // The answer is bytes made by the service; `valid` is its first member.
        route.onSend = [
          ...[route.onSend ?? []].flat(),
          (_request, reply, payload, done) => {
            if (reply.statusCode === 200 && Buffer.isBuffer(payload)) {
              configureValidity.set(reply, payload.subarray(0, validPrefix.length).equals(validPrefix));
            }
            done(null, payload);
          },
        ];
      }
      route.onResponse = [
        ...[route.onResponse ?? []].flat(),
        (request, reply, done) => {
          const problem = problems.get(request);
          total.inc({ outcome: outcome(reply, problem) });
          const broken = problem?.errors?.filter((item) => item.code === 'rule_violated').length ?? 0;
          if (key === 'POST /v1/quotes/price' && broken > 0) violations.inc(broken);
          done();
        },
      ];
    }
  });
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
