// Opening the store at start-up, for a single service and for the primary of `cpq serve --workers N`, which
// prepares it once before any worker starts and must not load the HTTP stack to do so.
import type { Config } from '../config.ts';
import { connect, type DatabaseHandle } from './connect.ts';
import { unavailability } from './errors.ts';
import { migrateToLatest } from './migrate.ts';
import { checkStore } from './store-check.ts';

function refused(at: string, reason: string): Error {
  return new Error(`the database at ${at} cannot be used: ${reason}`);
}

/** A fault of the store met while starting becomes the one line start-up gives up with; other errors pass. */
export function startFailure(at: string, error: unknown): unknown {
  const fault = unavailability(error);
  return fault?.store ? refused(at, fault.reason) : error;
}

export function openDatabase(config: Config, onPoolError?: (error: Error) => void): DatabaseHandle {
  try {
    return connect({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath, onPoolError });
  } catch (error) {
    // SQLite opens the file here: a read-only folder fails at once.
    throw startFailure(config.sqlitePath, error);
  }
}

/** Brings the schema up to date and refuses a store that cannot be written, which would start, say ready, and
 * answer every write 503. */
export async function prepareStore(
  database: DatabaseHandle,
  onMigration: (name: string) => void,
): Promise<void> {
  try {
    await migrateToLatest(database.db, onMigration);
    const fault = await checkStore(database.db);
    if (fault) throw refused(database.description, fault.reason);
  } catch (error) {
    throw startFailure(database.description, error);
  }
}
