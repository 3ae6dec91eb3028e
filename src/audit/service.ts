import { validationFailed } from '../errors.js';
import type { AuditType } from './events.js';
import type { AuditStore, StoredAuditEvent } from './store.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
/** Far longer than any cursor we hand out: a longer one is refused before it is decoded. */
export const MAX_CURSOR_LENGTH = 64;
const CURSOR = /^[A-Za-z0-9_-]{1,64}$/;
const SEQ = /^[1-9][0-9]{0,14}$/;

/** A page of a user's events, newest first, and the cursor of the next page (null on the last). */
export interface AuditPage {
  readonly events: StoredAuditEvent[];
  readonly nextCursor: string | null;
}

/**
 * A cursor names the position after which the next page starts. Opaque to clients (base64url), but
 * not secret: a forged one can only move within the caller's own log, which the query filters on.
 */
const encodeCursor = (seq: number): string => Buffer.from(`a${seq}`).toString('base64url');

function decodeCursor(cursor: string): number {
  const text = CURSOR.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  if (!text.startsWith('a') || !SEQ.test(text.slice(1))) throw validationFailed([{ field: 'cursor', message: 'is not a cursor this service handed out' }]);
  return Number(text.slice(1));
}

/** A page size from a query string: 1 to {@link MAX_PAGE}, {@link DEFAULT_PAGE} when absent. @throws validation_failed naming `limit`. */
export function parseLimit(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE)) throw validationFailed([{ field: 'limit', message: `must be a whole number from 1 to ${MAX_PAGE}` }]);
  return n;
}

/** What users may read of the audit log: their own events. */
export class AuditLog {
  constructor(private readonly store: AuditStore) {}

  /** One page of the user's events, newest first. @throws validation_failed naming `limit` or `cursor`. */
  async page(userId: string, query: { readonly limit?: string; readonly cursor?: string; readonly type?: AuditType }): Promise<AuditPage> {
    const limit = parseLimit(query.limit);
    const beforeSeq = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    // One more than the page: whether there is a next page, without a second query.
    const rows = await this.store.list({ userId, limit: limit + 1, ...(beforeSeq === undefined ? {} : { beforeSeq }), ...(query.type ? { type: query.type } : {}) });
    const events = rows.slice(0, limit);
    const last = events.at(-1);
    return { events, nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : null };
  }
}
