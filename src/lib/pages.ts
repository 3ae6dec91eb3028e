import { validationFailed } from '../errors.js';
import { isUuid } from './ids.js';

/*
 * Cursor pagination, as every list pages: newest first, a page size from the query string, and an
 * opaque cursor naming the item after which the next page starts.
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

/**
 * Where a newest-first page ends: the last item's creation time and its id, which breaks ties. The
 * next page is what sorts after it (a keyset), so items created or deleted between two requests
 * move no other item from one page to another: none is skipped or shown twice.
 */
export interface Position {
  readonly createdAt: string;
  readonly id: string;
}

/** One page asked for: its size, and the item it starts after (none: the newest first). */
export interface PageRequest {
  readonly limit: number;
  readonly after?: Position | undefined;
}

/** A page of items, and the cursor of the next one (null on the last). */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/** A position's cursor is at most 88 characters; a longer one is refused before it is decoded. */
export const MAX_CURSOR_LENGTH = 128;
const POSITION = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([0-9a-f-]{36})$/;

export const positionCursor = (position: Position): string => encodeCursor(`${position.createdAt}|${position.id}`);

/** The position a cursor of {@link positionCursor} names. @throws validation_failed naming `cursor`. */
export const decodePosition = (cursor: string): Position =>
  decodeCursor(cursor, MAX_CURSOR_LENGTH, (text) => {
    const match = POSITION.exec(text);
    const [, createdAt, id] = match ?? [];
    return createdAt !== undefined && id !== undefined && isUuid(id) && !Number.isNaN(Date.parse(createdAt)) ? { createdAt, id } : undefined;
  });

/** The page a list's `limit` and `cursor` ask for. @throws validation_failed naming `limit` or `cursor`. */
export function parsePage(query: { readonly limit?: string | undefined; readonly cursor?: string | undefined }): PageRequest {
  const limit = parseLimit(query.limit);
  return query.cursor === undefined ? { limit } : { limit, after: decodePosition(query.cursor) };
}

/** The page of rows a {@link PageRequest} read (one more than its limit), with the next page's cursor. */
export function keysetPage<T extends Position>(rows: readonly T[], page: PageRequest): Page<T> {
  return pageOf(rows, page.limit, positionCursor);
}
