import { iso } from '../clock.js';

/** Writes a batch of last uses: id to ISO 8601 time. */
export type WriteUses = (uses: ReadonlyMap<string, string>) => Promise<void>;

/**
 * Coalesces `last_used_at` writes for anything used on every request (sessions here): a session
 * used a thousand times a second costs one write per flush interval, not one per request. Only the
 * newest use of each id since the last flush is kept, so memory is bounded by the ids in use.
 */
export class LastUseRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly writeUses: WriteUses,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  record(id: string, atMs: number): void {
    this.pending.set(id, atMs);
  }

  /** The newest unflushed use of `id`, so lists are never behind this instance's own view. */
  pendingUse(id: string): string | null {
    const at = this.pending.get(id);
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
      await this.writeUses(new Map([...batch].map(([id, at]) => [id, iso(at)])));
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
