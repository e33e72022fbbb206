import type { Db, Executor } from './database.ts';

/**
 * Runs a read of several statements in one read-only snapshot, so it sees one committed state and never part of
 * a write: REPEATABLE READ READ ONLY on PostgreSQL (one snapshot for the whole transaction), a deferred
 * transaction on SQLite (its snapshot taken at its first read and held until it ends). A read of one statement
 * needs none: a statement always sees one state.
 */
export function readSnapshot<T>(db: Db, read: (tx: Executor) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
