import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connect, type DatabaseHandle } from '../../src/db/connect.ts';
import type { Dialect } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

export const postgresAdminUrl =
  process.env.CPQ_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Set by scripts/test.ts after it has probed PostgreSQL; a file run on its own tries both. */
export const dialects = (process.env.CPQ_TEST_DIALECTS ?? 'sqlite,postgres').split(',') as Dialect[];

export interface TestDatabase {
  handle: DatabaseHandle;
  /** DATABASE_URL for another process or instance on the same database; null for SQLite. */
  databaseUrl: string | null;
  sqlitePath: string;
  drop(): Promise<void>;
}

/** The environment that points another process (`cpq serve`, `cpq keys ...`) at this database. */
export function databaseEnv(database: TestDatabase): Record<string, string> {
  return database.databaseUrl === null
    ? { SQLITE_PATH: database.sqlitePath, DATABASE_URL: '' }
    : { DATABASE_URL: database.databaseUrl };
}

/** Runs one statement as the PostgreSQL administrator, outside any test database. */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A database of its own, migrated, for one test file; drop() removes every trace of it. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  const name = `cpq_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'sqlite') {
    const sqlitePath = join(tmpdir(), `${name}.sqlite`);
    const handle = connect({ databaseUrl: null, sqlitePath });
    await migrateToLatest(handle.db);
    return {
      handle,
      databaseUrl: null,
      sqlitePath,
      drop: async () => {
        await handle.db.destroy();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true });
      },
    };
  }
  await adminQuery(`create database ${name}`);
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const handle = connect({ databaseUrl, sqlitePath: ':memory:' });
  await migrateToLatest(handle.db);
  return {
    handle,
    databaseUrl,
    sqlitePath: ':memory:',
    drop: async () => {
      await handle.db.destroy();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}
