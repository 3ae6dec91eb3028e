import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { auditEvent, SYSTEM_CONTEXT } from '../audit/events.js';
import { type Clock, iso } from '../clock.js';
import type { Tables } from '../db/tables.js';
import type { LinkMinter } from './outbox.js';
import type { ClaimedMail, MailOutcome, MailQueue } from './queue.js';
import type { MailSender } from './sender.js';
import { linkFor, renderMail } from './templates.js';
import type { DeliveryCount, DeliveryOutcome } from '../observability/metrics/queues.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;

/** The first retry waits this long; each next one twice the last, up to {@link MAX_DELAY_MS}. */
const FIRST_DELAY_MS = 30 * SECOND;
const MAX_DELAY_MS = 2 * HOUR;
/** A mail is retried for a day from its creation (§11.3); an attempt that fails at or after it is the last. */
export const MAIL_WINDOW_MS = 24 * HOUR;
/** Each wait is moved by up to this fraction either way, so mails failed together do not retry in lockstep. */
const JITTER = 0.2;
/** Mails claimed per round; a user has at most one of them (outbox order). */
const BATCH = 64;

/** When to try again after the `attempt`-th attempt (1 for the first) failed at `now`, or null when that was the last. */
export function nextMailAttempt(createdAt: number, attempt: number, now: number, random: () => number = Math.random): number | null {
  const end = createdAt + MAIL_WINDOW_MS;
  if (now >= end) return null;
  const delay = Math.min(FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 20), MAX_DELAY_MS);
  return Math.min(now + delay * (1 - JITTER + 2 * JITTER * random()), end);
}

const COUNTED: Readonly<Record<MailOutcome['status'], DeliveryOutcome>> = { sent: 'success', pending: 'failure', failed: 'gave_up' };

export interface MailWorkerOptions {
  readonly db: Kysely<Tables>;
  /** SMTP_TIMEOUT_SECONDS in ms: a lease lasts three of them (connection, greeting, a reply) and a second, so a live worker's rarely lapses. */
  readonly timeoutMs: number;
  readonly publicUrl: URL;
  /** Mints the link of a mail with a link purpose (the account flows provide it); with none, such a mail is dropped unsent (superseded). */
  readonly minter: LinkMinter | null;
  readonly onError: (error: unknown, context: string) => void;
  /** Counts each recorded attempt (`rz_mail_deliveries_total`); absent when metrics are off. */
  readonly deliveries?: DeliveryCount | null;
  readonly random?: () => number;
}

/** What an error says about an attempt, without anything a template interpolated: the server's reply or the error's code. */
function reasonOf(error: unknown): string {
  const e = error as { responseCode?: unknown; response?: unknown; code?: unknown; message?: unknown };
  const text = typeof e.response === 'string' ? e.response : typeof e.code === 'string' ? e.code : typeof e.message === 'string' ? e.message : 'send failed';
  return text.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, 300);
}

/**
 * RFC 5321 §4.2.1: a 5yz reply to the recipient or to the message is permanent (no such mailbox,
 * message refused), so retrying for a day would only repeat it. Refusals of the connection or of
 * the login (the operator's relay to fix) are retried like any temporary failure.
 */
function isPermanent(error: unknown): boolean {
  const e = error as { responseCode?: unknown; code?: unknown };
  return typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600 && (e.code === 'EENVELOPE' || e.code === 'EMESSAGE');
}

/** Why an attempt failed, and whether the failure is final. */
interface Failure {
  readonly reason: string;
  readonly permanent: boolean;
}

/**
 * Sends due mails. Each is claimed under a lease with a fresh token, so one instance at a time
 * sends it, and the attempt is recorded only under that token. A process killed mid-send leaves
 * a lease that lapses and the mail is sent again, with the same Message-ID. The link of a link
 * mail is minted as it is sent: no link token is ever stored in the outbox.
 */
export class MailWorker {
  private stopping = false;
  private round: Promise<void> = Promise.resolve();

  constructor(
    private readonly queue: MailQueue,
    private readonly sender: MailSender,
    private readonly clock: Clock,
    private readonly options: MailWorkerOptions,
  ) {}

  /** Sends rounds of due mails until one finds nothing due (or the worker stops). */
  runOnce(): Promise<void> {
    this.round = this.round.then(() => this.drain());
    return this.round;
  }

  /** Stops claiming and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.round.catch(() => {});
  }

  private async drain(): Promise<void> {
    while (!this.stopping) {
      const now = this.clock.now();
      const claimed = await this.queue.claimDue(iso(now), iso(now + 3 * this.options.timeoutMs + SECOND), randomUUID(), BATCH);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((mail) => this.attempt(mail)));
    }
  }

  private async attempt(mail: ClaimedMail): Promise<void> {
    try {
      const link = await this.linkOf(mail);
      if (link === null) {
        await this.queue.supersede(mail.id, mail.leaseToken, iso(this.clock.now()));
        return;
      }
      const attemptedAt = this.clock.now();
      const error = await this.send(mail, link === undefined ? null : link, attemptedAt);
      await this.record(mail, attemptedAt, error);
    } catch (error) {
      // The lease lapses and a later round sends the mail again.
      this.options.onError(error, 'mail delivery');
    }
  }

  /** The minted link; null when the mail no longer deserves one; undefined for a notice. */
  private async linkOf(mail: ClaimedMail): Promise<string | null | undefined> {
    if (mail.linkPurpose === null) return undefined;
    const { minter, publicUrl, db } = this.options;
    if (minter === null || mail.userId === null) return null;
    const token = await minter.mint(db, { id: mail.id, userId: mail.userId, purpose: mail.linkPurpose, recipient: mail.recipient, createdAt: mail.createdAt });
    return token === null ? null : linkFor(publicUrl, mail.linkPurpose, token);
  }

  /** Null when the relay accepted the mail, the failure otherwise. */
  private async send(mail: ClaimedMail, link: string | null, at: number): Promise<Failure | null> {
    const rendered = renderMail(mail.template, mail.data, link, this.options.publicUrl);
    try {
      await this.sender.send({ ...rendered, id: mail.id, recipient: mail.recipient, date: new Date(at) });
      return null;
    } catch (error) {
      return { reason: reasonOf(error), permanent: isPermanent(error) };
    }
  }

  private async record(mail: ClaimedMail, attemptedAt: number, failure: Failure | null): Promise<void> {
    const endedAt = this.clock.now();
    const next = failure === null || failure.permanent ? null : nextMailAttempt(Date.parse(mail.createdAt), mail.attempts + 1, endedAt, this.options.random);
    const status = failure === null ? 'sent' : next === null ? 'failed' : 'pending';
    const outcome: MailOutcome = { attemptedAt: iso(attemptedAt), status, error: failure?.reason ?? null, nextAttemptAt: next === null ? null : iso(next) };
    const audit =
      status === 'failed'
        ? auditEvent({ type: 'mail.failed', userId: mail.userId, subject: mail.userId === null ? null : { type: 'user', id: mail.userId }, details: { template: mail.template } }, SYSTEM_CONTEXT, endedAt)
        : undefined;
    if (await this.queue.recordAttempt(mail.id, mail.leaseToken, outcome, audit)) this.options.deliveries?.(COUNTED[status]);
  }
}
