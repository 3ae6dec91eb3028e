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
/** First refusals written at once at most; a burst of more joins the batch. */
const MAX_WRITING = 100;

interface Pending {
  readonly token: RefusedToken;
  readonly address: string;
  readonly firstAt: number;
  lastAt: number;
  count: number;
}

/**
 * Records `token.refused` without a write per refused request. The first refusal of a token is
 * written at once, since it is the one its owner must hear of (a leaked token tried from elsewhere);
 * the ones that follow are counted in memory and written in the background every
 * {@link REFUSAL_INTERVAL_MS}, and at shutdown: a token presented from outside its allow-list a
 * thousand times a minute is one event a minute, with the count, the first time and address, and
 * the last time. A token not refused for a whole interval is first again. Memory is bounded by
 * {@link MAX_TOKENS}: a refusal of a token beyond it is not recorded.
 */
export class RefusalRecorder extends WriteBehind<Pending> {
  /** Tokens refused in this interval and the one before: their next refusal is no longer news. */
  private recent = new Set<string>();
  private before = new Set<string>();
  /** First refusals being written: a flush (and shutdown) waits for them. */
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly writeEvents: (events: readonly AuditEvent[]) => Promise<void>,
    private readonly reportError: (error: unknown) => void,
    intervalMs = REFUSAL_INTERVAL_MS,
  ) {
    super((batch) => writeEvents([...batch.values()].map(toEvent)), null, intervalMs, reportError);
  }

  /** Counts one refused request: constant work; the first refusal of a token starts its write. */
  note(token: RefusedToken, address: string, now: number): void {
    const id = token.tokenId;
    const entry = this.pending.get(id);
    if (entry) {
      entry.count++;
      entry.lastAt = Math.max(entry.lastAt, now);
      return;
    }
    if (!this.recent.has(id) && this.recent.size >= MAX_TOKENS) return;
    // Past MAX_WRITING first refusals in flight (a burst), the rest wait for the batch.
    const first = !this.recent.has(id) && !this.before.has(id) && this.writing.size < MAX_WRITING;
    this.recent.add(id);
    const refused: Pending = { token, address, firstAt: now, lastAt: now, count: 1 };
    if (first) this.writeFirst(refused);
    else if (this.pending.size < MAX_TOKENS) this.pending.set(id, refused);
  }

  override async flush(): Promise<void> {
    await Promise.all(this.writing);
    this.before = this.recent;
    this.recent = new Set();
    return super.flush();
  }

  /** Written apart from the batch; a failure is reported and dropped, as a failed batch is. */
  private writeFirst(refused: Pending): void {
    const write = this.writeEvents([toEvent(refused)]).catch(this.reportError);
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }
}

function toEvent({ token, address, firstAt, lastAt, count }: Pending): AuditEvent {
  const actor = { type: token.type, id: token.tokenId };
  const context = { actor, address, userAgent: null, requestId: null };
  const details = { token_type: token.type, name: token.name, hint: token.hint, refusals: count, last_refused_at: iso(lastAt) };
  return auditEvent({ type: 'token.refused', userId: token.userId, subject: { type: 'token', id: token.tokenId }, details }, context, firstAt);
}
