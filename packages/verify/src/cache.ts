import type { Caller } from './caller.js';

interface Entry {
  readonly caller: Caller;
  /** Milliseconds since the epoch after which the entry is not used. */
  readonly until: number;
  /** rz-auth said the token is over (revoked, logged out, deleted): refused without asking again. */
  readonly revoked: boolean;
}

/**
 * What an event from rz-auth says is no longer true. With `revoke`, the change is final (a revoked
 * token, a logged-out session, a deleted user or app never come back), so the entries are kept as
 * refusals; otherwise (narrowed scopes, new keys, a reset) they are dropped and asked about again.
 */
export type Invalidation =
  | { readonly kind: 'token'; readonly tokenId: string; readonly revoke: boolean }
  | { readonly kind: 'session'; readonly sessionId: string; readonly revoke: true }
  | { readonly kind: 'user'; readonly userId: string; readonly revoke: true }
  | { readonly kind: 'app'; readonly appId: string; readonly revoke: true }
  | { readonly kind: 'user-tokens'; readonly revoke: false }
  | { readonly kind: 'all'; readonly revoke: false };

/** What the cache knows of a token: its caller, that it is over, or nothing. */
export type Known = Caller | 'revoked' | undefined;

/** A user token's tokenId is its session id; the token type keeps the two apart. */
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

/** Sets `key` as the newest entry of `map`, the oldest going first once `max` are held. */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

/**
 * Answers about tokens, keyed by the token itself, bounded in count (the oldest entry goes first)
 * and in age (never past the token's expiry, so a kept refusal never outlives the token).
 * Invalidation scans every entry: events are rare next to requests, and a scan of the bounded map
 * costs less than keeping an index per field correct.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  get(token: string, now: number): Known {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.revoked ? 'revoked' : entry.caller;
    this.entries.delete(token);
    return undefined;
  }

  /** Keeps `caller` until its token expires or for the maximum age, whichever comes first. */
  set(token: string, caller: Caller, now: number): void {
    const until = Math.min(now + this.maxAgeMs, caller.expiresAt?.getTime() ?? Infinity);
    if (until <= now) return;
    setBounded(this.entries, token, { caller, until, revoked: false }, this.maxEntries);
  }

  apply(what: Invalidation): void {
    if (what.kind === 'all') {
      this.entries.clear();
      return;
    }
    for (const [token, entry] of this.entries) {
      if (!matches(entry.caller, what)) continue;
      // Replacing the value of a key being iterated keeps its place; deleting it is safe too.
      if (what.revoke) this.entries.set(token, { ...entry, revoked: true });
      else this.entries.delete(token);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Tokens rz-auth answered inactive, kept a short while so a client that keeps sending a revoked or
 * made-up token costs one introspection a minute, not one a request. An inactive answer never
 * turns active (token values are never reissued; a revocation, an expiry, a logout are final), so
 * no event has to clear it. Bounded apart from the answers about callers: a flood of made-up tokens
 * pushes out only other refusals, never a caller's cached answer.
 */
export class RefusalCache {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  has(token: string, now: number): boolean {
    const until = this.until.get(token);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(token);
    return false;
  }

  add(token: string, now: number): void {
    setBounded(this.until, token, now + this.ttlMs, this.maxEntries);
  }

  clear(): void {
    this.until.clear();
  }
}
