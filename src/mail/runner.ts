import type { Kysely } from 'kysely';
import type { Loop } from '../background.js';
import type { Clock } from '../clock.js';
import type { Tables } from '../db/tables.js';
import { Periodic } from '../lib/periodic.js';
import type { MailSettings } from './config.js';
import type { LinkMinter } from './outbox.js';
import { MailQueue } from './queue.js';
import { type MailSender, smtpSender } from './sender.js';
import { MailWorker } from './worker.js';
import type { DeliveryCount } from '../observability/metrics/queues.js';

/** How often a delivering process looks for due mails when the last round found none. */
export const MAIL_INTERVAL_MS = 1000;

/**
 * Mail background work (`mailDelivery`): every second, rounds of due mails until none is left.
 * `rz-auth mail deliver` runs it (the child `serve` forks, by default), or with MAIL_WORKER=inline
 * the server after it listens (docs/email.md); it stops on shutdown. No other command starts it,
 * and no mail is ever sent on a request's path.
 */
export class MailDelivery implements Loop {
  private readonly periodic: Periodic;

  constructor(
    readonly worker: MailWorker,
    private readonly sender: MailSender,
    onError: (error: unknown, context: string) => void,
    intervalMs = MAIL_INTERVAL_MS,
  ) {
    this.periodic = new Periodic(intervalMs, () => worker.runOnce(), (error) => onError(error, 'mail'));
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the schedule, lets the round in progress finish, and closes the SMTP connections. */
  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.worker.stop();
    this.sender.close();
  }

  /** Sends what is due, waiting for the sends (tests, under a TestClock). */
  runOnce(): Promise<void> {
    return this.worker.runOnce();
  }
}

/** Mail off: a loop that does nothing, so no timer runs and no table is read. */
export const NO_MAIL_DELIVERY: Loop = { start: () => {}, stop: async () => {} };

export interface MailParts {
  readonly minter: LinkMinter | null;
  readonly deliveries: DeliveryCount | null;
  readonly onError: (error: unknown, context: string) => void;
  /** Tests replace the SMTP transport; the server uses SMTP_URL's. */
  readonly sender?: MailSender;
}

/** The outbox's queue and the delivery loop of a process with mail on. */
export function createMailDelivery(db: Kysely<Tables>, clock: Clock, settings: MailSettings, parts: MailParts): { readonly queue: MailQueue; readonly delivery: MailDelivery } {
  const queue = new MailQueue(db);
  const sender = parts.sender ?? smtpSender(settings);
  const worker = new MailWorker(queue, sender, clock, { db, publicUrl: settings.publicUrl, timeoutMs: settings.smtp.timeoutMs, minter: parts.minter, onError: parts.onError, deliveries: parts.deliveries });
  return { queue, delivery: new MailDelivery(worker, sender, parts.onError) };
}
