import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db, Dialect } from './database.ts';
import { DatabaseUnavailableError } from './errors.ts';
import { statementName } from './named-statements.ts';
import { sqliteDialect } from './sqlite-driver.ts';

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /** What to show an operator: the SQLite path, or the PostgreSQL URL without its password. */
  description: string;
  /** The PostgreSQL pool's connections now; SQLite has one connection that Kysely hands out in turn. */
  pool?: () => { total: number; idle: number; waiting: number };
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

/** Runs the texts marked by `named` as named prepared statements; Kysely gives pg only a text and its values. */
class NamingClient extends pg.Client {
  /** Names this connection gave anew to statements the server would no longer run under their first one. */
  readonly #renamed = new Map<string, string>();

  // biome-ignore lint/suspicious/noExplicitAny: passes pg's overloaded arguments through as they come
  override query(...args: any[]): any {
    const [text, values] = args;
    const name = typeof text === 'string' ? statementName(text) : undefined;
    if (name === undefined) return super.query(...(args as [string]));
    return this.#runNamed(text, values, this.#renamed.get(text) ?? name);
  }

  async #runNamed(text: string, values: unknown[], name: string): Promise<pg.QueryResult> {
    try {
      return await super.query({ name, text, values });
    } catch (error) {
      // A migration changed the type of a column the statement selects: the server refuses the statement under
      // this name on this connection from then on, so it is prepared again under another.
      if (!(error instanceof Error) || !error.message.includes('cached plan must not change result type'))
        throw error;
      const renamed = `${statementName(text)}_${this.#renamed.size + 1}`;
      this.#renamed.set(text, renamed);
      await super.query(`deallocate ${name}`);
      return super.query({ name: renamed, text, values });
    }
  }
}

export function connect(options: ConnectOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      Client: NamingClient,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      // No request may hang on a lost server: queries give up and the request gets 503.
      query_timeout: 15_000,
      statement_timeout: 15_000,
    });
    // An idle client losing its server emits 'error' on the pool; unhandled, it would end the process.
    pool.on('error', (error) => options.onPoolError?.(error));
    const watched = new WeakSet<pg.PoolClient>();
    // A failure to get a connection is an outage whatever its SQLSTATE (a database refusing connections answers
    // 55000, a dropped one 3D000): tagging it here lets the error handler answer 503 rather than 500.
    const guarded = {
      connect: async () => {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          throw new DatabaseUnavailableError(error);
        }
        // The pool listens for errors only on idle clients. One lost while checked out between two statements
        // would emit 'error' with no listener, which ends the process; the next statement fails with it instead.
        if (!watched.has(client)) {
          watched.add(client);
          client.on('error', () => {});
        }
        return client;
      },
      end: () => pool.end(),
    };
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: guarded }) }),
      dialect: 'postgres',
      description: redactUrl(options.databaseUrl),
      pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    };
  }
  if (options.sqlitePath !== ':memory:') mkdirSync(dirname(options.sqlitePath), { recursive: true });
  return {
    db: new Kysely<Database>({ dialect: sqliteDialect(options.sqlitePath) }),
    dialect: 'sqlite',
    description: options.sqlitePath,
  };
}
