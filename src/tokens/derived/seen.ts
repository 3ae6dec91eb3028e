import { BoundedMap } from '../../lib/bounded-map.js';
import { WriteBehind } from '../../lib/write-behind.js';
import type { SeenChild } from './store.js';

/** At most one `derived_seen` write per child token per minute from one instance (contract §14.6). */
const MIN_INTERVAL_MS = 60_000;
const REMEMBERED = 50_000;

/**
 * Coalesces children's uses like tokens' last uses (src/lib/write-behind.ts): the first use of a
 * child token, then at most one use a minute, is kept for the next flush.
 */
export class SeenRecorder extends WriteBehind<SeenChild> {
  /** When each child token's use was last kept, by digest. */
  private readonly kept = new BoundedMap<string, number>(REMEMBERED);

  constructor(write: (uses: ReadonlyMap<string, SeenChild>) => Promise<void>, intervalMs: number, onError: (error: unknown) => void) {
    super(write, (_failed, newer) => newer, intervalMs, onError);
  }

  record(digest: string, use: SeenChild): void {
    const at = Date.parse(use.at);
    const last = this.kept.get(digest);
    if (last !== undefined && at - last < MIN_INTERVAL_MS) return;
    this.kept.set(digest, at);
    this.pending.set(digest, use);
  }
}
