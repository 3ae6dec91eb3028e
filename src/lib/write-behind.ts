/**
 * Coalesces writes of something touched on every request (a token's or a session's last use): one
 * entry per id is kept in memory and the batch is written once per interval, so an id used a
 * thousand times a second costs one write per interval, not one per request. Memory is bounded by
 * the ids in use. A failed batch is folded back under whatever was recorded since and retried, or,
 * for a writer with nothing to fold (`restore` null), reported and dropped.
 */
export class WriteBehind<Entry> {
  protected pending = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly writeBatch: (batch: ReadonlyMap<string, Entry>) => Promise<void>,
    /** What to keep when a failed entry meets a newer one recorded meanwhile; null drops a failed batch. */
    private readonly restore: ((failed: Entry, newer: Entry) => Entry) | null,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Writes everything recorded so far. Failures are reported and the entries retried next time. */
  flush(): Promise<void> {
    // After the previous flush however it ended: a rejection kept in the chain would skip every later one.
    const write = () => this.write();
    this.flushing = this.flushing.then(write, write);
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.writeBatch(batch);
    } catch (error) {
      const { restore } = this;
      if (restore) {
        for (const [id, entry] of batch) {
          const newer = this.pending.get(id);
          this.pending.set(id, newer === undefined ? entry : restore(entry, newer));
        }
      }
      this.onError(error);
    }
  }
}
