/** Work a process runs on a timer of its own, beside the requests. */
export interface Loop {
  start(): void;
  /** Stops the timer and waits for a round in progress; a write-behind also writes what it holds. */
  stop(): Promise<void>;
}

/** Every background loop of a server process, built by the composition root. */
export interface BackgroundLoops {
  /** Reads the change log for changes whose announcement was lost (CHANGES_POLL_MS). */
  readonly changePolling: Loop;
  /** Writes tokens' last uses (LAST_USED_FLUSH_MS). */
  readonly tokenUsage: Loop;
  /** Writes sessions' last uses (LAST_USED_FLUSH_MS). */
  readonly sessionUsage: Loop;
  /** Writes the `token.refused` events counted on the request path. */
  readonly refusals: Loop;
  /** The periodic clean-ups (expired sessions, old changes, token lifetimes, old audit events). */
  readonly maintenance: Loop;
  /** Dispatches audit events to webhooks and sends the due deliveries. */
  readonly webhookDelivery: Loop;
  /** Sends the mail outbox's due mails (MAIL_WORKER=inline; else `rz-auth mail deliver` starts it alone); does nothing when mail is off. */
  readonly mailDelivery: Loop;
}

export type LoopName = keyof BackgroundLoops;

/** Stopped in this order: the jobs, the change log's poll, then the write-behinds, which write what they hold. */
const ORDER: readonly LoopName[] = ['maintenance', 'webhookDelivery', 'mailDelivery', 'changePolling', 'tokenUsage', 'sessionUsage', 'refusals'];

/**
 * The one place background loops are started and stopped. The server starts them once it listens
 * and the composition root's close() stops them. The CLI never starts them: a command serves no
 * request, so it has nothing to flush or sweep, and what it changes reaches the servers through
 * the change feed. Tests leave out the loops they drive themselves (`runOnce()` under a TestClock).
 */
export class Background {
  constructor(private readonly loops: BackgroundLoops) {}

  start(options: { readonly except?: readonly LoopName[] } = {}): void {
    for (const name of ORDER) if (!options.except?.includes(name)) this.loops[name].start();
  }

  /** Stops every loop, started or not, one after the other. */
  async stop(): Promise<void> {
    for (const name of ORDER) await this.loops[name].stop();
  }
}
