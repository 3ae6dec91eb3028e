import { iso } from '../clock.js';
import type { TokenStore, TokenUse } from './store.js';

/** A token's uses since the last flush: the newest one, and every scope exercised. */
interface Pending {
  at: number;
  address: string | null;
  scopes: Set<string> | null;
}

/**
 * Coalesces usage writes: a token used a thousand times a second costs one write per flush
 * interval, not one per request. What is kept per token is bounded: a time, an address and a set
 * of at most the catalogue's scopes.
 */
export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: TokenStore,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
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

  /** Writes everything recorded so far. Failures are reported and the uses retried next time. */
  flush(): Promise<void> {
    // After the previous flush however it ended: a rejection kept in the chain would skip every later one.
    const write = () => this.write();
    this.flushing = this.flushing.then(write, write);
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const uses = new Map<string, TokenUse>();
    for (const [id, entry] of batch) uses.set(id, { at: iso(entry.at), address: entry.address, scopes: [...(entry.scopes ?? [])] });
    try {
      await this.store.recordUsage(uses);
    } catch (error) {
      for (const [id, entry] of batch) this.restore(id, entry);
      this.onError(error);
    }
  }

  /** Puts a failed batch's entry back under whatever was recorded since. */
  private restore(id: string, entry: Pending): void {
    const newer = this.pending.get(id);
    if (newer === undefined) {
      this.pending.set(id, entry);
      return;
    }
    newer.address ??= entry.address;
    for (const scope of entry.scopes ?? []) (newer.scopes ??= new Set()).add(scope);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
