import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { Type } from 'typebox';
import { accountRoutes } from './account/account.routes.ts';
import { describeLimits } from './api-limits.ts';
import { approvalPoliciesRoutes } from './approvals/approval-policies.routes.ts';
import { bundleDetailsRoutes } from './bundle-details/bundle-details.routes.ts';
import { bundlesRoutes } from './bundles/bundles.routes.ts';
import { catalogueFilesRoutes } from './catalogue-files/catalogue-files.routes.ts';
import { catalogueJsonSchema } from './catalogue-files/catalogue-files.schemas.ts';
import { component, components } from './components.ts';
import type { Config } from './config.ts';
import { consoleRoutes } from './console/console.routes.ts';
import type { DatabaseHandle } from './db/connect.ts';
import { type Unavailability, unavailability } from './db/errors.ts';
import { checkStore } from './db/store-check.ts';
import { eventsRoutes } from './events/events.routes.ts';
import { isApiRoute, needsWriteAccess, requireApiKey } from './http/auth.ts';
import { compressAnswers } from './http/compression.ts';
import { conditionalRequests } from './http/conditional.ts';
import { registerDocs } from './http/docs.ts';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  registerErrorHandling,
  schemaErrorFormatter,
} from './http/error-handler.ts';
import { idempotencyKeys } from './http/idempotency.ts';
import { registerJsonBody } from './http/json-body.ts';
import { registerMetrics } from './http/metrics.ts';
import { finishDocument, type OpenApiDocument, tag, withResponseHeaders } from './http/openapi.ts';
import { rateLimitPerKey } from './http/rate-limit.ts';
import { refuseUnstorableText } from './http/refuse-unstorable.ts';
import { keepRouteOptions } from './http/route-of.ts';
import { newId } from './ids.ts';
import { optionsRoutes } from './options/options.routes.ts';
import { priceBooksRoutes } from './price-books/price-books.routes.ts';
import { AppError } from './problems.ts';
import { quoteApprovalsRoutes } from './quotes/quote-approvals.routes.ts';
import { quotesRoutes } from './quotes/quotes.routes.ts';
import { rulesRoutes } from './rules/rules.routes.ts';
import { nodeHttp } from './shared/node-http.ts';
import { ProblemRef, withErrorResponses } from './shared/schemas.ts';
import { type Limits, limitsOf } from './shared/scope.ts';
import { validatorCompiler } from './shared/validation.ts';
import { packageVersion } from './version.ts';
import { webhooksRoutes } from './webhooks/webhooks.routes.ts';

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
  /** Made from config when not given; a test gives its own to hold places in the answer gate. */
  limits?: Limits;
}

export type App = FastifyInstance;

const operationsTag = tag(
  'operations',
  'Whether the process is up and ready, for load balancers and orchestrators; no API key needed',
);
const Health = component('Health', Type.Object({ status: Type.Literal('ok') }));
const Readiness = component(
  'Readiness',
  Type.Object({
    status: Type.Literal('ready'),
    database: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')], {
      description: 'The database the service stores in',
    }),
  }),
);

/** How long /readyz reports a fault of the store that a request met. */
const STORE_FAULT_MEMORY_MS = 10_000;

const requestIdPattern = /^[\w.:@-]{1,128}$/;

export async function buildApp({ config, database, limits = limitsOf(config) }: AppOptions): Promise<App> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    // Without these a client sending a byte every few seconds holds its connection (and a descriptor) for ever.
    // Node enforces the header and request timeouts on a timer; checking every second keeps them close to exact.
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    // An incoming x-request-id is kept when it is safe to log and echo; otherwise we make our own.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : newId('request');
    },
    // No path parameter is too long for the router: an id longer than any the service makes is one the account
    // does not have, answered 404 after authentication like any other. Node's header limit bounds the request line.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: nodeHttp.maxHeaderSize },
    // Fastify's own 503 while closing is not a problem document; the onRequest hook below answers instead.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    schemaErrorFormatter,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API and are checked by the tests and the fuzzer; serialization is plain
  // JSON.stringify: fast-json-stringify compiled a serializer per route and status at start-up, and ran Ajv for every
  // adjustment to pick its anyOf branch, slower than JSON.stringify on the larger answers.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  keepRouteOptions(app);
  registerJsonBody(app);
  for (const schema of components()) app.addSchema(schema);
  registerErrorHandling(app);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Hooks with nothing to wait for take Fastify's callback and call it at once: an async hook costs every
  // request a promise and a turn of the microtask queue.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Requests arriving on a kept-alive connection while in-flight ones drain; Fastify adds Connection: close.
    done(closing ? new AppError('service_unavailable', 'The server is shutting down') : undefined);
  });
  // A request that was in flight when shutdown began still gets its answer, and word not to reuse the connection.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // Off unless CORS_ORIGINS names origins: a browser app on another origin may then call the API with a key,
  // and read the headers a client needs.
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: [
        'content-type',
        'x-api-key',
        'if-match',
        'if-none-match',
        'idempotency-key',
        'x-request-id',
      ],
      exposedHeaders: [
        'etag',
        'location',
        'x-request-id',
        'ratelimit-limit',
        'ratelimit-remaining',
        'retry-after',
        'idempotent-replayed',
      ],
      maxAge: 600,
    });
  }
  const metrics = registerMetrics(app, { config, database, gate: limits.gate });
  requireApiKey(app, { db: database.db, limits });
  rateLimitPerKey(app, config);
  refuseUnstorableText(app);
  idempotencyKeys(app, database.db);
  conditionalRequests(app);
  // After the ETag's hook, which answers 304 before anything is compressed.
  compressAnswers(app);

  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!isApiRoute(route.url)) {
      if (route.schema && response)
        route.schema.response = withResponseHeaders(route, withErrorResponses(response, []));
      return;
    }
    route.schema ??= {};
    route.schema.response = withResponseHeaders(route, withErrorResponses(response));
    // `readWrite` beside `apiKey` (the same header, both required) marks what a read-only key may not call, and
    // `approver` what only an approver key may: schemes of their own, not apiKey roles (read as OAuth scopes).
    const writes = [route.method].flat().some((method) => needsWriteAccess(method, route.config));
    (route.schema as Record<string, unknown>).security = [
      {
        apiKey: [],
        ...(writes ? { readWrite: [] } : {}),
        ...(route.config?.approverOnly ? { approver: [] } : {}),
      },
    ];
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'cpq',
        version: packageVersion,
        description:
          'Configure-price-quote backend for product bundles and price books. Every /v1 operation needs an API key ' +
          'in the x-api-key header; an operation whose security also names readWrite refuses read-only keys ' +
          'with 403, and one that names approver takes only approver keys (`cpq keys create --approver`). ' +
          'Errors are RFC 9457 problem details (application/problem+json). An answer of 1 KB or more ' +
          'comes compressed when Accept-Encoding asks for br or gzip (by q-value, br on a tie), with ' +
          'Vary: Accept-Encoding.\n\n' +
          describeLimits(config),
        license: { name: 'MIT', identifier: 'MIT' },
        // Self-hosted: whoever runs the instance answers for it.
        contact: { name: 'The operators of this cpq instance' },
      },
      // Relative: the document describes the service that serves it, wherever that is.
      servers: [{ url: '/', description: 'The service this document was read from' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          readWrite: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description:
              'The same x-api-key header. An operation that names it beside apiKey needs a read-write key: a ' +
              'read-only key gets 403 forbidden.',
          },
          approver: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description:
              'The same x-api-key header. An operation that names it needs an approver key (`cpq keys create ' +
              '--approver`); any other key gets 403 forbidden.',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) =>
      finishDocument((documentObject as unknown as { openapiObject: OpenApiDocument }).openapiObject),
  });

  const { db } = database;
  const hidden = { schema: { hide: true } };
  // The catalogue file's JSON Schema, for editors; no key, like the OpenAPI document.
  app.get('/catalogue.schema.json', hidden, async () => catalogueJsonSchema());
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        description:
          'Answers 200 while the process runs, without touching the database: a liveness check for a supervisor or load balancer. Readiness (the database can be read and written) is GET /readyz.',
        tags: operationsTag,
        summary: 'The process is up (no key needed)',
        security: [],
        response: { 200: Type.With(Health, { description: 'The process is up and answering' }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  // A fault of the store that a request met, which the check of /readyz may not meet itself: a full disk shows
  // only when a write needs room.
  let storeFault: { reason: string; at: number } | undefined;
  app.addHook('onError', async (_request, _reply, error) => {
    const fault = unavailability(error);
    if (fault?.store) storeFault = { reason: fault.reason, at: Date.now() };
  });
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: operationsTag,
        summary: 'The database can be read and written (no key needed); 503 saying why while it cannot',
        security: [],
        description:
          'Ready when every table is there and a write commits, and no request met a fault of the store (full, ' +
          `read-only, tables missing) in the last ${STORE_FAULT_MEMORY_MS / 1000} s.`,
        response: {
          200: Type.With(Readiness, { description: 'Ready: the database answers and stores' }),
          503: Type.With(ProblemRef, { description: 'Not ready: the detail says why' }),
        },
      },
    },
    async (request) => {
      let fault: Unavailability | undefined;
      try {
        fault = await checkStore(db);
      } catch (error) {
        request.log.error({ err: error }, 'the readiness check failed');
        fault = { reason: 'the database failed the readiness check', store: false };
      }
      const recent =
        storeFault && Date.now() - storeFault.at < STORE_FAULT_MEMORY_MS ? storeFault : undefined;
      const reason = fault?.reason ?? recent?.reason;
      if (reason !== undefined) throw new AppError('service_unavailable', `Not ready: ${reason}`);
      return { status: 'ready' as const, database: database.dialect };
    },
  );
  app.get('/openapi.json', hidden, async () => app.swagger());
  registerDocs(app);

  await app.register(
    async (v1) => {
      for (const routes of [
        bundlesRoutes,
        bundleDetailsRoutes,
        optionsRoutes,
        priceBooksRoutes,
        quotesRoutes,
        rulesRoutes,
        eventsRoutes,
        webhooksRoutes,
        accountRoutes,
        catalogueFilesRoutes,
        approvalPoliciesRoutes,
        quoteApprovalsRoutes,
      ]) {
        await v1.register(routes, { db, config, metrics });
      }
    },
    { prefix: '/v1' },
  );
  await app.register(consoleRoutes);

  return app;
}
