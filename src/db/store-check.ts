import { sql } from 'kysely';
import { type Db, tableNames } from './database.ts';
import { type Unavailability, unavailability } from './errors.ts';

/**
 * Why the store cannot serve requests now, or undefined when every table is there and a write commits: the write sets
 * the migrator's lock row to what it holds, through to the disk, so a read-only file or folder, a full disk and
 * missing tables all show. Other errors are thrown.
 */
export async function checkStore(db: Db): Promise<Unavailability | undefined> {
  try {
    await db.transaction().execute(async (trx) => {
      const probes = tableNames.map((table) => sql`(select 1 from ${sql.table(table)} limit 0)`);
      await sql`select ${sql.join(probes)}`.execute(trx);
      await sql`update kysely_migration_lock set is_locked = is_locked`.execute(trx);
    });
    return undefined;
  } catch (error) {
    const fault = unavailability(error);
    if (fault === undefined) throw error;
    return fault;
  }
}
