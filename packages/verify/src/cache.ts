import type { Caller } from './caller.js';

interface Entry {
  readonly caller: Caller;
  /** Milliseconds since the epoch after which the entry is not used. */
  readonly until: number;
}

/** What an event from rz-auth says is no longer true. */
export type Invalidation =
  | { readonly kind: 'token'; readonly tokenId: string }
  | { readonly kind: 'session'; readonly sessionId: string }
  | { readonly kind: 'user'; readonly userId: string }
  | { readonly kind: 'app'; readonly appId: string }
  | { readonly kind: 'user-tokens' }
  | { readonly kind: 'all' };

/** A user token's tokenId is its session id, so one field serves both token and session. */
function matches(caller: Caller, what: Invalidation): boolean {
  switch (what.kind) {
    case 'token':
      return caller.tokenType !== 'user' && caller.tokenId === what.tokenId;
    case 'session':
      return caller.tokenType === 'user' && caller.tokenId === what.sessionId;
    case 'user':
      return caller.userId === what.userId;
    case 'app':
      return caller.appId === what.appId;
    case 'user-tokens':
      return caller.tokenType === 'user';
    case 'all':
      return true;
  }
}

/**
 * Answers about tokens, keyed by the token itself, bounded in count (the oldest entry goes first)
 * and in age. Invalidation scans every entry: events are rare next to requests, and a scan of the
 * bounded map costs less than keeping an index per field correct.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  get(token: string, now: number): Caller | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.caller;
    this.entries.delete(token);
    return undefined;
  }

  /** Keeps `caller` until its token expires or for the maximum age, whichever comes first. */
  set(token: string, caller: Caller, now: number): void {
    const until = Math.min(now + this.maxAgeMs, caller.expiresAt?.getTime() ?? Infinity);
    if (until <= now) return;
    this.entries.delete(token);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { caller, until });
  }

  drop(what: Invalidation): void {
    if (what.kind === 'all') {
      this.entries.clear();
      return;
    }
    for (const [token, entry] of this.entries) if (matches(entry.caller, what)) this.entries.delete(token);
  }

  get size(): number {
    return this.entries.size;
  }
}
