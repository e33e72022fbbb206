import type { KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * A view of `db` that counts the queries run through it, for tests that bound how many a request takes. Counted as
 * their results come back, so that statements run as compiled text (db.executeQuery) count as those built do.
 */
export function countingQueries(db: Db): { db: Db; take(): number } {
  let queries = 0;
  const counter: KyselyPlugin = {
    transformQuery: ({ node }) => node,
    transformResult: async ({ result }) => {
      queries++;
      return result;
    },
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
