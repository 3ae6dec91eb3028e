import { iso } from '../clock.js';
import { WriteBehind } from './write-behind.js';

/** Writes a batch of last uses: id to ISO 8601 time. */
export type WriteUses = (uses: ReadonlyMap<string, string>) => Promise<void>;

/** Coalesces `last_used_at` writes of sessions: only the newest use of each id since the last flush is kept. */
export class LastUseRecorder extends WriteBehind<number> {
  constructor(writeUses: WriteUses, intervalMs: number, onError: (error: unknown) => void) {
    super((batch) => writeUses(new Map([...batch].map(([id, at]) => [id, iso(at)]))), (_failed, newer) => newer, intervalMs, onError);
  }

  record(id: string, atMs: number): void {
    this.pending.set(id, atMs);
  }

  /** The newest unflushed use of `id`, so lists are never behind this instance's own view. */
  pendingUse(id: string): string | null {
    const at = this.pending.get(id);
    return at === undefined ? null : iso(at);
  }
}
