/**
 * Runs a task every `intervalMs` in the background: never two runs at once (the next is scheduled
 * when the last has finished, so a slow run delays the next instead of piling up), failures
 * reported and the schedule kept. The timer does not hold the process open.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Cancels the next run and waits for the one in progress, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(this.run, this.intervalMs);
    this.timer.unref();
  }

  private readonly run = (): void => {
    this.running = Promise.resolve()
      .then(this.task)
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule();
      });
  };
}
