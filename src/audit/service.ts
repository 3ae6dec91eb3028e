import { decodeCursor, encodeCursor, pageOf, parseLimit } from '../lib/pages.js';
import type { AuditType } from './events.js';
import type { AuditStore, StoredAuditEvent } from './store.js';

/** Far longer than any cursor we hand out: a longer one is refused before it is decoded. */
export const MAX_CURSOR_LENGTH = 64;
const SEQ = /^a([1-9][0-9]{0,14})$/;

/** A page of a user's events, newest first, and the cursor of the next page (null on the last). */
export interface AuditPage {
  readonly events: StoredAuditEvent[];
  readonly nextCursor: string | null;
}

/** A cursor names the `seq` after which the next page starts. */
const encodeSeq = (seq: number): string => encodeCursor(`a${seq}`);
const decodeSeq = (cursor: string): number => decodeCursor(cursor, MAX_CURSOR_LENGTH, (text) => {
  const digits = SEQ.exec(text)?.[1];
  return digits === undefined ? undefined : Number(digits);
});

/** What users may read of the audit log: their own events. */
export class AuditLog {
  constructor(private readonly store: AuditStore) {}

  /** One page of the user's events, newest first. @throws validation_failed naming `limit` or `cursor`. */
  async page(userId: string, query: { readonly limit?: string; readonly cursor?: string; readonly type?: AuditType }): Promise<AuditPage> {
    const limit = parseLimit(query.limit);
    const beforeSeq = query.cursor === undefined ? undefined : decodeSeq(query.cursor);
    const rows = await this.store.list({ userId, limit: limit + 1, ...(beforeSeq === undefined ? {} : { beforeSeq }), ...(query.type ? { type: query.type } : {}) });
    const { items: events, nextCursor } = pageOf(rows, limit, (last) => encodeSeq(last.seq));
    return { events, nextCursor };
  }
}
