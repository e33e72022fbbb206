import type { Db, Executor } from './database.ts';

/**
 * Runs a read of several statements in one read-only snapshot, so it sees one committed state, never part of a
 * write: REPEATABLE READ READ ONLY on PostgreSQL, a deferred transaction on SQLite (its snapshot taken at its first
 * read). A read of one statement needs none.
 */
export function readSnapshot<T>(db: Db, read: (tx: Executor) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
