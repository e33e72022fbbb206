import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// node:sqlite cannot bind booleans; Kysely hands them over as they are.
function bindable(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as SQLInputValue)));
}

/** Adapts node:sqlite to the better-sqlite3-shaped interface Kysely's SQLite dialect drives. */
export function openSqlite(path: string): SqliteDatabase & { raw: DatabaseSync } {
  const raw = new DatabaseSync(path);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec('PRAGMA busy_timeout = 5000');
  return {
    raw,
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      const statement = raw.prepare(sql);
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...bindable(parameters)),
        run: (parameters) => {
          const result = statement.run(...bindable(parameters));
          return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
        },
        iterate: (parameters) => statement.iterate(...bindable(parameters)),
      };
    },
  };
}
