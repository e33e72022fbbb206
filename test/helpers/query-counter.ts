import type { KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/** A view of `db` that counts the queries run through it, for tests that bound how many a request takes. */
export function countingQueries(db: Db): { db: Db; take(): number } {
  let queries = 0;
  const counter: KyselyPlugin = {
    transformQuery: ({ node }) => {
      queries++;
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return {
    db: db.withPlugin(counter),
    /** The queries since the last take. */
    take: () => {
      const taken = queries;
      queries = 0;
      return taken;
    },
  };
}
