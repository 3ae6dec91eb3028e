import type { Clock } from '../clock.js';
import { Periodic } from '../lib/periodic.js';

/** One periodic clean-up. Its deletes must be idempotent: every instance runs every sweep. */
export interface Sweep {
  readonly name: string;
  /** One round as of `now` (milliseconds since the epoch). */
  run(now: number): Promise<unknown>;
}

/**
 * The server's background clean-ups, one round every `intervalMs` while it runs. Several instances
 * may sweep at once; each sweep only deletes what no instance can need any more.
 */
export class Maintenance {
  private readonly periodic: Periodic;

  constructor(
    private readonly sweeps: readonly Sweep[],
    private readonly clock: Clock,
    intervalMs: number,
    private readonly onError: (error: unknown, context: string) => void,
  ) {
    this.periodic = new Periodic(intervalMs, () => this.runOnce(), (error) => onError(error, 'maintenance'));
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the schedule and waits for a round in progress. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** Runs every sweep once; one that fails is reported and does not stop the others. */
  async runOnce(): Promise<void> {
    const now = this.clock.now();
    for (const sweep of this.sweeps) {
      try {
        await sweep.run(now);
      } catch (error) {
        this.onError(error, `maintenance: ${sweep.name}`);
      }
    }
  }
}
