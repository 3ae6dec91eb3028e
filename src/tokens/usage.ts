import { iso } from '../clock.js';
import { WriteBehind } from '../lib/write-behind.js';
import type { TokenStore, TokenUse } from './store.js';

/** A token's uses since the last flush: the newest one, and every scope exercised. */
interface Pending {
  at: number;
  address: string | null;
  scopes: Set<string> | null;
}

/**
 * Coalesces usage writes of tokens (see {@link WriteBehind}). What is kept per token is bounded: a
 * time, an address and a set of at most the catalogue's scopes.
 */
export class UsageRecorder extends WriteBehind<Pending> {
  constructor(store: TokenStore, intervalMs: number, onError: (error: unknown) => void) {
    super((batch) => store.recordUsage(toUses(batch)), restore, intervalMs, onError);
  }

  /** One use of a token at `atMs` from `ip` (null when no client address is known: introspection). */
  record(tokenId: string, atMs: number, ip: string | null): void {
    const entry = this.pending.get(tokenId);
    if (entry === undefined) this.pending.set(tokenId, { at: atMs, address: ip, scopes: null });
    else {
      entry.at = atMs;
      if (ip !== null) entry.address = ip;
    }
  }

  /** The token exercised `scope` (a route needed it and the token carried it). */
  recordScope(tokenId: string, scope: string, atMs: number): void {
    let entry = this.pending.get(tokenId);
    if (entry === undefined) {
      entry = { at: atMs, address: null, scopes: null };
      this.pending.set(tokenId, entry);
    }
    (entry.scopes ??= new Set()).add(scope);
  }

  /** The newest unflushed use of a token, so reads are never behind this instance's own view. */
  pendingUse(tokenId: string): { at: string; address: string | null; scopes: readonly string[] } | null {
    const entry = this.pending.get(tokenId);
    return entry === undefined ? null : { at: iso(entry.at), address: entry.address, scopes: [...(entry.scopes ?? [])] };
  }
}

function toUses(batch: ReadonlyMap<string, Pending>): Map<string, TokenUse> {
  const uses = new Map<string, TokenUse>();
  for (const [id, entry] of batch) uses.set(id, { at: iso(entry.at), address: entry.address, scopes: [...(entry.scopes ?? [])] });
  return uses;
}

/** A failed batch's entry under whatever was recorded since: the newer time, every scope of both. */
function restore(failed: Pending, newer: Pending): Pending {
  newer.address ??= failed.address;
  for (const scope of failed.scopes ?? []) (newer.scopes ??= new Set()).add(scope);
  return newer;
}
