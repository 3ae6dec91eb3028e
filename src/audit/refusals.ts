import { iso } from '../clock.js';
import { WriteBehind } from '../lib/write-behind.js';
import { type AuditEvent, auditEvent } from './events.js';

/** A token refused by its allow-list, as the authenticator knows it. */
export interface RefusedToken {
  /** Only API and app tokens have allow-lists; the principal's type names which. */
  readonly type: 'user' | 'api_token' | 'app_token';
  readonly tokenId: string;
  readonly userId: string;
  readonly name: string;
  readonly hint: string;
}

/** How often the refusals counted so far are written: at most one event per token per interval. */
export const REFUSAL_INTERVAL_MS = 60_000;
/** Tokens counted between two writes; refusals of further tokens wait for the next interval. */
const MAX_TOKENS = 10_000;

interface Pending {
  readonly token: RefusedToken;
  readonly address: string;
  readonly firstAt: number;
  lastAt: number;
  count: number;
}

/**
 * Records `token.refused` without a write per refused request: a token presented from outside its
 * allow-list a thousand times a minute is one event a minute, with the count, the first time and
 * address, and the last time. Refusals are only counted in memory on the request path; the events
 * are written in the background, every {@link REFUSAL_INTERVAL_MS}, and at shutdown. Memory is
 * bounded by {@link MAX_TOKENS}: a refusal of a token beyond it is not recorded.
 */
export class RefusalRecorder extends WriteBehind<Pending> {
  constructor(write: (events: readonly AuditEvent[]) => Promise<void>, onError: (error: unknown) => void, intervalMs = REFUSAL_INTERVAL_MS) {
    super((batch) => write([...batch.values()].map(toEvent)), null, intervalMs, onError);
  }

  /** Counts one refused request: constant work, no I/O. */
  note(token: RefusedToken, address: string, now: number): void {
    const entry = this.pending.get(token.tokenId);
    if (entry) {
      entry.count++;
      entry.lastAt = Math.max(entry.lastAt, now);
    } else if (this.pending.size < MAX_TOKENS) {
      this.pending.set(token.tokenId, { token, address, firstAt: now, lastAt: now, count: 1 });
    }
  }
}

function toEvent({ token, address, firstAt, lastAt, count }: Pending): AuditEvent {
  const actor = { type: token.type, id: token.tokenId };
  const context = { actor, address, userAgent: null, requestId: null };
  const details = { token_type: token.type, name: token.name, hint: token.hint, refusals: count, last_refused_at: iso(lastAt) };
  return auditEvent({ type: 'token.refused', userId: token.userId, subject: { type: 'token', id: token.tokenId }, details }, context, firstAt);
}
