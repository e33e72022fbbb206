/** No connection could be had at all: whatever the server said (refused, not accepting connections, unknown
 * database, bad password), the request cannot be served now, and the pool retries on the next one. */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`cannot connect to the database: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'DatabaseUnavailableError';
  }
}

// Errors that mean "the database cannot be reached right now", as opposed to a bad query. They map to 503 and
// the pool heals by itself once the server is back.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown: the server terminated the connection
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

const unavailableMessages = [
  'Connection terminated',
  'connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
  'database is locked',
  'Query read timeout',
];

// SQLite result codes, as node:sqlite reports them in `errcode`; the low byte is the primary code of an extended
// one (1544 is SQLITE_READONLY_DIRECTORY).
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;

export interface Unavailability {
  /** Why, in words fit for a client and for /readyz. */
  reason: string;
  /**
   * A fault of the store itself (full, read-only, tables missing) rather than of the way to it or of a lock
   * held a moment: it lasts until an operator mends it, and a probe may not see it (a full disk shows only when
   * a write needs room).
   */
  store: boolean;
}

const unreachable: Unavailability = { reason: 'the database cannot be reached', store: false };
const missingTables: Unavailability = { reason: 'tables of the database are missing', store: true };

/**
 * Why the database cannot serve a request now; undefined for a fault of the request or of the service. The
 * request may be retried once the database, or an operator, mends it: 503 with Retry-After, never 500.
 */
export function unavailability(error: unknown): Unavailability | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error instanceof DatabaseUnavailableError) return unreachable;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (unavailableCodes.has(code) || code.startsWith('08')) return unreachable;
    // Class 53, insufficient resources: disk full (53100), out of memory (53200).
    if (code.startsWith('53')) return { reason: 'the database is out of storage', store: true };
    // read_only_sql_transaction: a standby, or a server set to read only.
    if (code === '25006') return { reason: 'the database is read-only', store: true };
    // undefined_table: once migrated every table exists, so a missing one means the database was recreated or
    // damaged under the running service (a query of ours naming a wrong table would fail every test).
    if (code === '42P01') return missingTables;
  }
  const errcode = (error as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number') {
    switch (errcode & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        return { reason: 'the database is busy', store: false };
      case SQLITE_READONLY:
        return { reason: 'the database is read-only', store: true };
      case SQLITE_FULL:
        return { reason: 'the database storage is full', store: true };
      case SQLITE_IOERR:
      case SQLITE_CANTOPEN:
        return { reason: 'the database storage cannot be read or written', store: true };
    }
    // SQLite's counterpart of undefined_table has only the generic code.
    if (error.message.startsWith('no such table')) return missingTables;
  }
  if (unavailableMessages.some((m) => error.message.includes(m))) return unreachable;
  return undefined;
}

/**
 * A write named versions of a root (If-Match) and the root exists at none of them. The database layer says only
 * that; the error handler answers it as 412 precondition_failed.
 */
export class StaleVersionError extends Error {
  constructor() {
    super('If-Match names no current version: the resource has changed since it was read; read it again');
    this.name = 'StaleVersionError';
  }
}
