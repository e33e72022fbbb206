import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { AnswerLimits } from './heavy-answers.ts';
import type { Metrics } from './metrics.ts';

/** What every area's route plugin is given: routes stay thin and hand the database to services. */
export type Routes = FastifyPluginAsyncTypebox<{
  db: Db;
  config: Config;
  answers: AnswerLimits;
  metrics: Metrics;
}>;
