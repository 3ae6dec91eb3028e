import { PostgresAdapter } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** True when the Kysely instance talks to PostgreSQL. */
export const isPostgres = (db: { getExecutor(): { readonly adapter: unknown } }): boolean =>
  db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Rows per multi-row INSERT. A statement's bound parameters are limited (SQLite 32766, PostgreSQL
 * 65535); 500 rows of a dozen columns stay far below both.
 */
const INSERT_BATCH = 500;

/** `rows` in parts of {@link INSERT_BATCH}, one INSERT each. */
export function* insertBatches<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) yield rows.slice(i, i + INSERT_BATCH);
}

/** True for a unique-constraint violation, in either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const { code } = error as { code: unknown };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** True for a foreign-key violation (the row referred to is gone), in either dialect. */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const { code } = error as { code: unknown };
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/** True when PostgreSQL aborted the transaction to break a deadlock or as not serializable: nothing it did remains. */
export function isDeadlock(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const { code } = error as { code: unknown };
  return code === '40P01' || code === '40001';
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  // PostgreSQL ended the transaction to break a deadlock, or as not serializable.
  '40P01',
  '40001',
]);

/**
 * True when the store could not be reached or could not take the work right now (connection
 * refused or lost, PostgreSQL shutting down or out of connections, SQLite locked or out of disk,
 * a deadlock): a 503 for the client, whose retry is answered from the state that won, not a bug.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^(08|53|57P)/.test(code))) return true;
  return typeof message === 'string' && /connection (terminated|is not open)|database connection is not open|timeout exceeded when trying to connect|driver has already been destroyed/i.test(message);
}
