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

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof DatabaseUnavailableError) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (unavailableCodes.has(code) || code.startsWith('08'))) return true;
  if (unavailableMessages.some((m) => error.message.includes(m))) return true;
  const errno = (error as { errcode?: unknown }).errcode;
  // node:sqlite reports SQLITE_BUSY (5) and SQLITE_LOCKED (6) as numeric errcodes
  return errno === 5 || errno === 6;
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
