import { validationFailed } from '../errors.js';

/*
 * Cursor pagination, as GET /api/audit and a webhook's deliveries page: newest first, a page size
 * from the query string, and a cursor naming the position after which the next page starts.
 */

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/** A page size from a query string: 1 to {@link MAX_PAGE}, {@link DEFAULT_PAGE} when absent. @throws validation_failed naming `limit`. */
export function parseLimit(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE)) throw validationFailed([{ field: 'limit', message: `must be a whole number from 1 to ${MAX_PAGE}` }]);
  return n;
}

/**
 * A cursor is its position's text in base64url: opaque to clients, but not secret, since a forged
 * one can only move within what the query already limits the caller to.
 */
export const encodeCursor = (position: string): string => Buffer.from(position).toString('base64url');

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The position a cursor names, read by `parse` from its text (undefined when it is not a position).
 * Anything longer than `maxLength` is refused before it is decoded.
 * @throws validation_failed naming `cursor`.
 */
export function decodeCursor<T>(cursor: string, maxLength: number, parse: (text: string) => T | undefined): T {
  const text = cursor.length <= maxLength && BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : undefined;
  // Only the spelling we hand out: the decoder ignores a stray last character or its unused bits,
  // so many strings would name one position.
  const position = text !== undefined && encodeCursor(text) === cursor ? parse(text) : undefined;
  if (position === undefined) throw validationFailed([{ field: 'cursor', message: 'is not a cursor this service handed out' }]);
  return position;
}

/**
 * A page from a query for one row more than `limit`: that row only tells that there is a next
 * page, without a second query. The next cursor is the last row's, or null on the last page.
 */
export function pageOf<T>(rows: readonly T[], limit: number, cursorOf: (last: T) => string): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
