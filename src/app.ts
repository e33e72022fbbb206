import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalar from '@scalar/fastify-api-reference';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { sql } from 'kysely';
import { bundleDetailsRoutes } from './bundle-details/bundle-details.routes.ts';
import { bundlesRoutes } from './bundles/bundles.routes.ts';
import type { Config } from './config.ts';
import type { DatabaseHandle } from './db/connect.ts';
import { requireApiKey } from './http/auth.ts';
import { Problem, withErrorResponses } from './http/common-schemas.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { AppError } from './http/errors.ts';
import { validatorCompiler } from './http/validation.ts';
import { newId } from './ids.ts';
import { optionsRoutes } from './options/options.routes.ts';
import { priceBooksRoutes } from './price-books/price-books.routes.ts';
import { quotesRoutes } from './quotes/quotes.routes.ts';

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
}

export type App = FastifyInstance;

const requestIdPattern = /^[\w.:@-]{1,128}$/;

export async function buildApp({ config, database }: AppOptions): Promise<App> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    // An incoming x-request-id is kept when it is safe to log and echo; otherwise we make our own.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : newId('request');
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Only JSON is accepted; anything else is a 415 rather than a string handed to a route.
  app.removeContentTypeParser('text/plain');
  app.addSchema(Problem);
  registerErrorHandling(app);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/')) return;
    route.schema ??= {};
    route.schema.response = withErrorResponses(route.schema.response as Record<string, unknown> | undefined);
    (route.schema as Record<string, unknown>).security = [{ apiKey: [] }];
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'cpq',
        version: '1.0.0',
        description:
          'Configure-price-quote backend for product bundles and price books. Errors are RFC 9457 problem details.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  const { db } = database;
  const operational = { schema: { hide: true } };
  app.get('/healthz', operational, async () => ({ status: 'ok' }));
  app.get('/readyz', operational, async () => {
    try {
      await sql`select 1`.execute(db);
    } catch {
      throw new AppError('service_unavailable', 'The database cannot be reached', {
        headers: { 'retry-after': '1' },
      });
    }
    return { status: 'ready', database: database.dialect };
  });
  app.get('/openapi.json', operational, async () => app.swagger());
  await app.register(scalar, {
    routePrefix: '/docs',
    configuration: { url: '/openapi.json', title: 'cpq API' },
  });

  await app.register(
    async (v1) => {
      requireApiKey(v1, db);
      for (const routes of [
        bundlesRoutes,
        bundleDetailsRoutes,
        optionsRoutes,
        priceBooksRoutes,
        quotesRoutes,
      ]) {
        await v1.register(routes, { db });
      }
    },
    { prefix: '/v1' },
  );

  return app;
}
