import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type SqliteStatement,
  type TransactionSettings,
} from 'kysely';

// node:sqlite cannot bind booleans; Kysely hands them over as they are.
function bindable(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as SQLInputValue)));
}

// Kysely prepares every query anew, compiling its SQL each time, and each unfinalised statement holds native memory
// V8 does not see until its wrapper is collected. The same few hundred statements serve every request, so they are
// kept, the least recently used dropped past this many.
const preparedStatementsKept = 256;

/** How long a statement waits for another connection's lock (another process on the file) before it fails: the
 * request then gets 503. */
const busyTimeoutMs = 5000;

/**
 * A row as Kysely's SQLite dialect expects it, a plain object. node:sqlite makes its rows objects without a
 * prototype, which V8 keeps as hash tables, most of what an export allocated; the same names set in the same order
 * on `{}` share one hidden class and take far less.
 */
function toObject(
  names: readonly string[],
  values: readonly SQLOutputValue[],
): Record<string, SQLOutputValue> {
  const row: Record<string, SQLOutputValue> = {};
  for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i] as SQLOutputValue;
  return row;
}

/**
 * A prepared statement, whether it returns rows, and its columns' names where its text names them all (asking
 * node:sqlite costs a primary-key lookup). A `*`'s are asked after every run: SQLite prepares it again, with the new
 * columns, when another process has changed the table since (a migration).
 */
interface KeptStatement {
  statement: StatementSync;
  reader: boolean;
  names: readonly string[] | null;
}

function columnNames(statement: StatementSync): readonly string[] {
  return statement.columns().map((c) => c.name);
}

/** Adapts node:sqlite to the better-sqlite3-shaped interface Kysely's SQLite dialect drives. */
function openSqlite(path: string): SqliteDatabase & { raw: DatabaseSync } {
  const raw = new DatabaseSync(path);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const prepared = new Map<string, KeptStatement>();
  const statementFor = (sql: string): KeptStatement => {
    let kept = prepared.get(sql);
    if (kept) {
      prepared.delete(sql);
    } else {
      const statement = raw.prepare(sql);
      statement.setReturnArrays(true);
      const names = columnNames(statement);
      kept = { statement, reader: names.length > 0, names: sql.includes('*') ? null : names };
      if (prepared.size >= preparedStatementsKept) prepared.delete(prepared.keys().next().value as string);
    }
    prepared.set(sql, kept);
    return kept;
  };
  return {
    raw,
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      const { statement, reader, names: keptNames } = statementFor(sql);
      const namesNow = () => keptNames ?? columnNames(statement);
      return {
        reader,
        all: (parameters) => {
          const rows = statement.all(...bindable(parameters)) as unknown as SQLOutputValue[][];
          const names = namesNow();
          return rows.map((row) => toObject(names, row));
        },
        run: (parameters) => {
          const result = statement.run(...bindable(parameters));
          return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
        },
        iterate: (parameters) => {
          let names: readonly string[] | undefined;
          return Iterator.from(statement.iterate(...bindable(parameters)) as Iterable<SQLOutputValue[]>).map(
            (row) => {
              names ??= namesNow();
              return toObject(names, row);
            },
          );
        },
      };
    },
  };
}

const SQLITE_BUSY = 5;

/**
 * Write transactions begin IMMEDIATE: Kysely's deferred ones fail at once with SQLITE_BUSY when another connection
 * has committed since their first read. Read-only ones (readSnapshot) stay deferred. The lock is awaited on the event
 * loop, not in SQLite's busy handler, which would stall the process and keep a holder here from ever committing.
 */
class WriteLockingDriver extends SqliteDriver {
  readonly #raw: DatabaseSync;

  constructor(database: SqliteDatabase & { raw: DatabaseSync }) {
    super({ database });
    this.#raw = database.raw;
  }

  // Kysely passes the settings to every driver; its SQLite one declares no parameter for them.
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings) {
    if (settings?.accessMode === 'read only') return super.beginTransaction(connection);
    // Kysely holds the connection for the transaction from here on, so nothing else runs under the zero timeout.
    const deadline = Date.now() + busyTimeoutMs;
    this.#raw.exec('PRAGMA busy_timeout = 0');
    try {
      for (let pause = 1; ; pause = Math.min(2 * pause, 16)) {
        try {
          this.#raw.exec('BEGIN IMMEDIATE');
          return;
        } catch (error) {
          if ((error as { errcode?: unknown }).errcode !== SQLITE_BUSY || Date.now() + pause > deadline)
            throw error;
        }
        await sleep(pause);
      }
    } finally {
      this.#raw.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    }
  }

  // SQLite ends a transaction by itself on some faults (a full disk, an I/O error); a ROLLBACK then would fail
  // with "no transaction is active" and hide the fault that matters.
  override async rollbackTransaction(connection: DatabaseConnection) {
    if (this.#raw.isTransaction) await super.rollbackTransaction(connection);
  }
}

/** Kysely's SQLite dialect over node:sqlite, its write transactions taking the write lock as they begin. */
export function sqliteDialect(path: string): Dialect {
  const database = openSqlite(path);
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new WriteLockingDriver(database);
    }
  })({ database });
}
