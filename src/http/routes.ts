import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Metrics } from './metrics.ts';

/** What every area's route plugin is given: routes stay thin and hand the database to services. */
export type Routes = FastifyPluginAsyncTypebox<{
  db: Db;
  config: Config;
  metrics: Metrics;
}>;

/**
 * An answer already serialized (its bytes, its JSON text, or a stream of bytes), for a handler to return as its
 * payload: Fastify sends it as it is, and the route's response schema documents it in /openapi.json. Returned rather
 * than passed to reply.send, whose reply an async handler would then return: Fastify awaits that thenable, which cost
 * a warm details answer 6-8% of its CPU (`npm run bench:compare`).
 */
export function serialized<Payload>(answer: Buffer | string | Readable): Payload {
  return answer as Payload;
}
