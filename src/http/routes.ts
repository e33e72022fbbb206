import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
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

/**
 * Parts sent as they are, never copied into one: a single buffer as the payload, several as a stream that lets
 * each go once written (a kept answer's stay in its cache), with their length.
 */
export function partsPayload<Payload>(reply: FastifyReply, parts: readonly Buffer[]): Payload {
  const [only] = parts;
  if (parts.length === 1 && only) return serialized(only);
  reply.header(
    'content-length',
    parts.reduce((sum, part) => sum + part.byteLength, 0),
  );
  const left = [...parts];
  return serialized(
    Readable.from(
      (function* () {
        for (let part = left.shift(); part !== undefined; part = left.shift()) yield part;
      })(),
      { objectMode: false },
    ),
  );
}
