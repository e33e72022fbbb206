import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// node:sqlite cannot bind booleans; Kysely hands them over as they are.
function bindable(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as SQLInputValue)));
}

// Kysely prepares every query anew. Compiling the SQL took ~8% of a cached details request, and each unfinalised
// statement holds native memory V8 does not see until its wrapper is collected; the same few hundred statements
// serve every request, so they are kept, the least recently used dropped past this many.
const preparedStatementsKept = 256;

/** Adapts node:sqlite to the better-sqlite3-shaped interface Kysely's SQLite dialect drives. */
export function openSqlite(path: string): SqliteDatabase & { raw: DatabaseSync } {
  const raw = new DatabaseSync(path);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec('PRAGMA busy_timeout = 5000');
  const prepared = new Map<string, StatementSync>();
  const statementFor = (sql: string): StatementSync => {
    let statement = prepared.get(sql);
    if (statement) {
      prepared.delete(sql);
    } else {
      statement = raw.prepare(sql);
      if (prepared.size >= preparedStatementsKept) prepared.delete(prepared.keys().next().value as string);
    }
    prepared.set(sql, statement);
    return statement;
  };
  return {
    raw,
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      const statement = statementFor(sql);
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
