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
 * An answer already serialized (bytes, JSON text or a stream), returned as the handler's payload: returning what
 * reply.send gives back would have Fastify await it as a thenable, a cost on every warm answer.
 */
export function serialized<Payload>(answer: Buffer | string | Readable): Payload {
  return answer as Payload;
}
