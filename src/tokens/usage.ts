import { iso } from '../clock.js';
import type { TokenStore } from './store.js';

/**
 * Coalesces `last_used_at` writes: a token used a thousand times a second costs one write per
 * flush interval, not one per request.
 */
export class UsageRecorder {
  private pending = new Map<string, number>();
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

  record(tokenId: string, atMs: number): void {
    this.pending.set(tokenId, atMs);
  }

  /** The newest unflushed use of a token, so lists are never behind this instance's own view. */
  pendingUse(tokenId: string): string | null {
    const at = this.pending.get(tokenId);
    return at === undefined ? null : iso(at);
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
    try {
      await this.store.recordUsage(new Map([...batch].map(([id, at]) => [id, iso(at)])));
    } catch (error) {
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.onError(error);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
