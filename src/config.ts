import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { type Static, Type } from 'typebox';

export const Config = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
  sqlitePath: Type.String({ minLength: 1 }),
  logLevel: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
  ),
  bodyLimit: Type.Integer({ minimum: 1024 }),
  /** Largest catalogue file POST /v1/catalogue/apply accepts, in bytes. */
  catalogueBodyLimit: Type.Integer({ minimum: 1024 }),
  /** Requests per second each API key may sustain; 0 turns rate limiting off. */
  rateLimitPerSecond: Type.Number({ minimum: 0 }),
  /** Requests a key may make at once after being idle. */
  rateLimitBurst: Type.Integer({ minimum: 1 }),
  /** Bytes of serialized bundle details kept in memory for reuse; 0 keeps none. */
  detailsCacheBytes: Type.Integer({ minimum: 0 }),
  /** Days an event stays in the feed before it is purged. */
  eventsRetentionDays: Type.Integer({ minimum: 1, maximum: 3650 }),
  /** Browser origins allowed to call the API across origins (CORS); none turns CORS off. */
  corsOrigins: Type.Array(Type.String({ pattern: '^https?://[^/?#\\s]+$' })),
  /** Milliseconds a client has to send the request line and headers. */
  headersTimeoutMs: Type.Integer({ minimum: 1 }),
  /** Milliseconds a client has to send a whole request, headers and body. */
  requestTimeoutMs: Type.Integer({ minimum: 1 }),
  /** Milliseconds an idle kept-alive connection stays open. */
  keepAliveTimeoutMs: Type.Integer({ minimum: 1 }),
  /** Client connections held at once; one more is closed as soon as it is accepted. */
  maxConnections: Type.Integer({ minimum: 1 }),
  /** Largest answer, in bytes of JSON, a request may have built (bundle details). */
  answerMaxBytes: Type.Integer({ minimum: 1024 }),
  /** Large answers (bundle details, quote catalogues) built at once, and how many more may wait. */
  heavyAnswersAtOnce: Type.Integer({ minimum: 1 }),
  heavyAnswersQueued: Type.Integer({ minimum: 0 }),
  /** Steps (values set and conflicts met) one configure search may take before the request is refused. */
  configureMaxSteps: Type.Integer({ minimum: 1 }),
  /** Milliseconds of CPU time one configure request may search before it is refused. */
  configureBudgetMs: Type.Integer({ minimum: 10, maximum: 60_000 }),
  /** Threads configure searches in, at most, started as needed. */
  configureThreads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Configure outcomes kept beside each cached catalogue (a bundle's state in one currency); 0 keeps none. */
  configureAnswersKept: Type.Integer({ minimum: 0 }),
  /** Milliseconds shutdown waits for requests in flight before it closes every connection. */
  shutdownGraceMs: Type.Integer({ minimum: 0 }),
  /** Milliseconds of quiet after which a process whose RSS grew gives its heap's freed memory back; 0: never. */
  idleCollectMs: Type.Integer({ minimum: 0 }),
  /** The key that seals webhook signing secrets at rest (32 bytes, hex or base64); none stores them unsealed. */
  webhooksSecretKey: Type.Union([
    Type.String({ pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$' }),
    Type.Null(),
  ]),
  /** Lets webhook endpoints use http and loopback, private or link-local addresses (tests, local use). */
  webhooksAllowPrivate: Type.Boolean(),
  /** Webhook attempts one instance makes at once, in all and to one endpoint. */
  webhooksConcurrency: Type.Integer({ minimum: 1, maximum: 1000 }),
  webhooksEndpointConcurrency: Type.Integer({ minimum: 1, maximum: 100 }),
  /** Milliseconds a webhook receiver has to answer an attempt. */
  webhooksTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000 }),
  /** Whether GET /metrics (Prometheus) is served. */
  metricsEnabled: Type.Boolean(),
  /** A port of its own for /metrics; null serves it on the API's port. */
  metricsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
});
export type Config = Static<typeof Config>;

// Checked by Ajv, which validates the requests too: TypeBox's own checker is hundreds more modules to load.
const checkConfig = new Ajv({ strict: false }).compile(Config);

export class ConfigError extends Error {}

/**
 * Every environment variable the service reads, with its default and allowed values: what `cpq serve --help` lists
 * and what an error about a bad value says.
 */
export const environment: readonly {
  name: string;
  field: keyof Config;
  default: string;
  allowed: string;
}[] = [
  { name: 'PORT', field: 'port', default: '3000', allowed: 'an integer from 0 to 65535 (0: any free port)' },
  { name: 'HOST', field: 'host', default: '127.0.0.1', allowed: 'an address or host name to listen on' },
  {
    name: 'DATABASE_URL',
    field: 'databaseUrl',
    default: 'unset: SQLite',
    allowed: 'a postgres:// or postgresql:// URL, or unset for SQLite',
  },
  { name: 'SQLITE_PATH', field: 'sqlitePath', default: './data/cpq.sqlite', allowed: 'a file path' },
  {
    name: 'LOG_LEVEL',
    field: 'logLevel',
    default: 'info',
    allowed: 'one of fatal, error, warn, info, debug, trace, silent',
  },
  {
    name: 'BODY_LIMIT',
    field: 'bodyLimit',
    default: '1048576',
    allowed: 'an integer number of bytes, 1024 or more',
  },
  {
    name: 'CATALOGUE_BODY_LIMIT',
    field: 'catalogueBodyLimit',
    default: '67108864',
    allowed: 'an integer number of bytes, 1024 or more',
  },
  {
    name: 'RATE_LIMIT_PER_SECOND',
    field: 'rateLimitPerSecond',
    default: '100',
    allowed: 'a number of requests per second per API key, 0 or more (0: no limit)',
  },
  { name: 'RATE_LIMIT_BURST', field: 'rateLimitBurst', default: '200', allowed: 'an integer, 1 or more' },
  {
    name: 'DETAILS_CACHE_BYTES',
    field: 'detailsCacheBytes',
    default: '33554432',
    allowed: 'an integer number of bytes, 0 or more (0: no cache)',
  },
  {
    name: 'EVENTS_RETENTION_DAYS',
    field: 'eventsRetentionDays',
    default: '30',
    allowed: 'an integer from 1 to 3650',
  },
  {
    name: 'CORS_ORIGINS',
    field: 'corsOrigins',
    default: 'unset: CORS off',
    allowed: 'comma-separated origins such as https://app.example.com',
  },
  {
    name: 'HEADERS_TIMEOUT_MS',
    field: 'headersTimeoutMs',
    default: '10000',
    allowed: 'an integer number of milliseconds, 1 or more, not above REQUEST_TIMEOUT_MS',
  },
  {
    name: 'REQUEST_TIMEOUT_MS',
    field: 'requestTimeoutMs',
    default: '30000',
    allowed: 'an integer number of milliseconds, 1 or more',
  },
  {
    name: 'KEEP_ALIVE_TIMEOUT_MS',
    field: 'keepAliveTimeoutMs',
    default: '5000',
    allowed: 'an integer number of milliseconds, 1 or more',
  },
  {
    name: 'MAX_CONNECTIONS',
    field: 'maxConnections',
    default: 'half the open-file limit (ulimit -n), at most 4096',
    allowed: 'an integer, 1 or more: connections beyond it are closed as soon as they are accepted',
  },
  {
    name: 'SHUTDOWN_GRACE_MS',
    field: 'shutdownGraceMs',
    default: '10000',
    allowed: 'an integer number of milliseconds, 0 or more',
  },
  {
    name: 'IDLE_COLLECT_MS',
    field: 'idleCollectMs',
    default: '5000',
    allowed: 'an integer number of milliseconds, 0 (never) or more',
  },
  {
    name: 'ANSWER_MAX_BYTES',
    field: 'answerMaxBytes',
    default: '33554432',
    allowed: 'an integer number of bytes, 1024 or more',
  },
  {
    name: 'HEAVY_ANSWERS_AT_ONCE',
    field: 'heavyAnswersAtOnce',
    default: '1',
    allowed: 'an integer, 1 or more',
  },
  {
    name: 'HEAVY_ANSWERS_QUEUED',
    field: 'heavyAnswersQueued',
    default: '32',
    allowed: 'an integer, 0 or more',
  },
  {
    name: 'METRICS',
    field: 'metricsEnabled',
    default: 'on',
    allowed: 'on or off',
  },
  {
    name: 'METRICS_PORT',
    field: 'metricsPort',
    default: 'unset: /metrics on PORT',
    allowed: 'an integer from 0 to 65535, or unset to serve /metrics beside the API',
  },
  {
    name: 'CONFIGURE_MAX_STEPS',
    field: 'configureMaxSteps',
    default: '1000000',
    allowed: 'an integer, 1 or more',
  },
  {
    name: 'CONFIGURE_BUDGET_MS',
    field: 'configureBudgetMs',
    default: '1000',
    allowed: 'an integer number of milliseconds of CPU time from 10 to 60000',
  },
  {
    name: 'CONFIGURE_THREADS',
    field: 'configureThreads',
    default: '1',
    allowed: 'an integer from 1 to 64 (per process of cpq serve --workers)',
  },
  {
    name: 'CONFIGURE_ANSWERS_KEPT',
    field: 'configureAnswersKept',
    default: '256',
    allowed: 'an integer, 0 or more (0: none kept)',
  },
  {
    name: 'WEBHOOKS_SECRET_KEY',
    field: 'webhooksSecretKey',
    default: 'unset: webhook secrets stored unsealed',
    allowed: '32 random bytes as 64 hex digits or 44 characters of base64 (openssl rand -base64 32)',
  },
  {
    name: 'WEBHOOKS_ALLOW_PRIVATE',
    field: 'webhooksAllowPrivate',
    default: 'false',
    allowed: 'true (webhooks may go to http and to loopback, private and link-local addresses) or false',
  },
  {
    name: 'WEBHOOKS_CONCURRENCY',
    field: 'webhooksConcurrency',
    default: '16',
    allowed: 'an integer from 1 to 1000',
  },
  {
    name: 'WEBHOOKS_ENDPOINT_CONCURRENCY',
    field: 'webhooksEndpointConcurrency',
    default: '4',
    allowed: 'an integer from 1 to 100',
  },
  {
    name: 'WEBHOOKS_TIMEOUT_MS',
    field: 'webhooksTimeoutMs',
    default: '10000',
    allowed: 'an integer number of milliseconds from 100 to 60000',
  },
];

/**
 * The default cap on client connections: half the process's limit on open descriptors, so that files, the
 * database and webhook attempts keep the other half, and at most 4096. Where the limit cannot be read, 1000.
 */
function defaultMaxConnections(): number {
  let limits = '';
  try {
    limits = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return 1000;
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(limits)?.[1];
  if (soft === undefined) return 1000;
  return soft === 'unlimited' ? 4096 : Math.max(1, Math.min(4096, Math.floor(Number(soft) / 2)));
}

/**
 * Reads the environment once, at start-up; a bad value stops the process with a message naming the variable and
 * its allowed values (never the value itself, which may hold a password).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // A variable set to the empty string counts as unset, as `PORT= cpq serve` means.
  const read = (name: string) => (env[name] === '' ? undefined : env[name]);
  const number = (name: string, fallback: number) => {
    const value = read(name);
    return value === undefined ? fallback : Number(value);
  };
  // Anything but the two words is left as text, which the schema then refuses.
  const toggle = (value: string | undefined, fallback: boolean, yes: string, no: string) =>
    value === undefined ? fallback : value === yes ? true : value === no ? false : value;
  const candidate = {
    port: number('PORT', 3000),
    host: read('HOST') ?? '127.0.0.1',
    databaseUrl: read('DATABASE_URL') ?? null,
    sqlitePath: read('SQLITE_PATH') ?? './data/cpq.sqlite',
    logLevel: read('LOG_LEVEL') ?? 'info',
    bodyLimit: number('BODY_LIMIT', 1024 * 1024),
    catalogueBodyLimit: number('CATALOGUE_BODY_LIMIT', 64 * 1024 * 1024),
    rateLimitPerSecond: number('RATE_LIMIT_PER_SECOND', 100),
    rateLimitBurst: number('RATE_LIMIT_BURST', 200),
    detailsCacheBytes: number('DETAILS_CACHE_BYTES', 32 * 1024 * 1024),
    eventsRetentionDays: number('EVENTS_RETENTION_DAYS', 30),
    headersTimeoutMs: number('HEADERS_TIMEOUT_MS', 10_000),
    requestTimeoutMs: number('REQUEST_TIMEOUT_MS', 30_000),
    keepAliveTimeoutMs: number('KEEP_ALIVE_TIMEOUT_MS', 5_000),
    maxConnections:
      read('MAX_CONNECTIONS') === undefined ? defaultMaxConnections() : number('MAX_CONNECTIONS', 0),
    shutdownGraceMs: number('SHUTDOWN_GRACE_MS', 10_000),
    idleCollectMs: number('IDLE_COLLECT_MS', 5000),
    corsOrigins: (read('CORS_ORIGINS') ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
    answerMaxBytes: number('ANSWER_MAX_BYTES', 32 * 1024 * 1024),
    // One: every build runs on the one event loop, so a second at once adds no CPU, only what it holds in flight,
    // and its rounds can run back to back with the first's; it gains only where builds wait on a distant database
    // (README, Operations: Large answers).
    heavyAnswersAtOnce: number('HEAVY_ANSWERS_AT_ONCE', 1),
    heavyAnswersQueued: number('HEAVY_ANSWERS_QUEUED', 32),
    configureMaxSteps: number('CONFIGURE_MAX_STEPS', 1_000_000),
    configureBudgetMs: number('CONFIGURE_BUDGET_MS', 1000),
    // One: beside the event loop, the second core of a small machine, and the least memory; three hard requests at
    // once are still each answered within three budgets (a search stops at its request's deadline).
    configureThreads: number('CONFIGURE_THREADS', 1),
    configureAnswersKept: number('CONFIGURE_ANSWERS_KEPT', 256),
    webhooksSecretKey: read('WEBHOOKS_SECRET_KEY') ?? null,
    webhooksAllowPrivate: toggle(read('WEBHOOKS_ALLOW_PRIVATE'), false, 'true', 'false'),
    webhooksConcurrency: number('WEBHOOKS_CONCURRENCY', 16),
    webhooksEndpointConcurrency: number('WEBHOOKS_ENDPOINT_CONCURRENCY', 4),
    webhooksTimeoutMs: number('WEBHOOKS_TIMEOUT_MS', 10_000),
    metricsEnabled: toggle(read('METRICS'), true, 'on', 'off'),
    metricsPort: read('METRICS_PORT') === undefined ? null : number('METRICS_PORT', 0),
  };
  const [first] = checkConfig(candidate) ? [] : (checkConfig.errors ?? []);
  if (first) {
    const field = first.instancePath.split('/')[1] ?? '';
    const variable = environment.find((v) => v.field === field);
    throw new ConfigError(
      variable ? `${variable.name} is not valid: expected ${variable.allowed}` : `${field} is not valid`,
    );
  }
  if (candidate.headersTimeoutMs > candidate.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS is not valid: must not be above REQUEST_TIMEOUT_MS');
  }
  return candidate as Config;
}
