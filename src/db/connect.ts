import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db, Dialect } from './database.ts';
import { openSqlite } from './sqlite-driver.ts';

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /** What to show an operator: the SQLite path, or the PostgreSQL URL without its password. */
  description: string;
}

export interface ConnectOptions {
  databaseUrl: string | null;
  sqlitePath: string;
  poolSize?: number;
  onPoolError?: (error: Error) => void;
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres';
  }
}

// PostgreSQL's bigint (count(*)) arrives as text by default; counts here fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export function connect(options: ConnectOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      // No request may hang on a lost server: queries give up and the request gets 503.
      query_timeout: 15_000,
      statement_timeout: 15_000,
    });
    // An idle client losing its server emits 'error' on the pool; unhandled, it would end the process.
    pool.on('error', (error) => options.onPoolError?.(error));
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
      dialect: 'postgres',
      description: redactUrl(options.databaseUrl),
    };
  }
  if (options.sqlitePath !== ':memory:') mkdirSync(dirname(options.sqlitePath), { recursive: true });
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqlite(options.sqlitePath) }) }),
    dialect: 'sqlite',
    description: options.sqlitePath,
  };
}
