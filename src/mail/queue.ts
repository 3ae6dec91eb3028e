import type { Kysely, Selectable } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import type { MailOutboxTable } from '../db/mail-tables.js';
import type { Tables } from '../db/tables.js';
import type { LinkPurpose, MailTemplate } from './outbox.js';

export type MailStatus = MailOutboxTable['status'];

/** A mail a worker has claimed: what it needs to render and send it, and the lease it holds. */
export interface ClaimedMail {
  readonly id: string;
  readonly userId: string | null;
  readonly recipient: string;
  readonly template: MailTemplate;
  readonly data: Readonly<Record<string, string>>;
  readonly linkPurpose: LinkPurpose | null;
  readonly createdAt: string;
  /** Attempts recorded before this one. */
  readonly attempts: number;
  readonly leaseToken: string;
}

/** What one attempt did, and what becomes of the mail. */
export interface MailOutcome {
  readonly attemptedAt: string;
  readonly status: Exclude<MailStatus, 'superseded'>;
  readonly error: string | null;
  /** When the next attempt is due (pending), null once finished. */
  readonly nextAttemptAt: string | null;
}

/** A mail as the operator sees it (`rz-auth mail list`): never a link token, which is not stored. */
export interface ListedMail {
  readonly id: string;
  readonly recipient: string;
  readonly template: string;
  readonly status: MailStatus;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly nextAttemptAt: string | null;
  readonly sentAt: string | null;
}

type Row = Pick<Selectable<MailOutboxTable>, 'id' | 'user_id' | 'recipient' | 'template' | 'data' | 'link_purpose' | 'created_at' | 'attempts'>;

const CLAIMED_COLUMNS = ['id', 'user_id', 'recipient', 'template', 'data', 'link_purpose', 'created_at', 'attempts'] as const;

/**
 * The mail outbox's SQL for the delivery worker and the operator. The lease works as the webhook
 * outbox's does (src/webhooks/queue.ts): candidates are read, then leased by id in one UPDATE that
 * checks again that each is still free, so two instances racing for a mail never both take it,
 * and an attempt is recorded only under the lease token that claimed it.
 */
export class MailQueue {
  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * Leases up to `limit` mails due at `now` whose lease is free or lapsed, until `leaseUntil`. A
   * user's mail is a candidate only when no earlier mail of theirs is still pending (leased or
   * waiting for a retry): a user's mails go out one at a time, in outbox order (§11.5).
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number): Promise<ClaimedMail[]> {
    // A read first: the claim is a write, which on SQLite would take the write lock every round.
    const due = await this.db.selectFrom('mail_outbox').select('seq').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
    if (!due) return [];
    const candidates = await this.db
      .selectFrom('mail_outbox as m')
      .select('m.id')
      .where('m.status', '=', 'pending')
      .where('m.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('m.lease_until', 'is', null), eb('m.lease_until', '<=', now)]))
      .where((eb) =>
        eb.or([
          eb('m.user_id', 'is', null),
          eb.not(eb.exists(eb.selectFrom('mail_outbox as e').select('e.seq').whereRef('e.user_id', '=', 'm.user_id').where('e.status', '=', 'pending').whereRef('e.seq', '<', 'm.seq'))),
        ]),
      )
      .orderBy('m.next_attempt_at')
      .orderBy('m.seq')
      .limit(limit)
      .execute();
    if (candidates.length === 0) return [];
    const leased = await this.db
      .updateTable('mail_outbox')
      .set({ lease_until: leaseUntil, lease_token: leaseToken })
      .where(
        'id',
        'in',
        candidates.map((c) => c.id),
      )
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .returning(CLAIMED_COLUMNS)
      .execute();
    return leased.map((row) => toClaimed(row, leaseToken));
  }

  /**
   * Records an attempt and the mail's new state, only while `leaseToken` still holds the lease: a
   * worker whose lease lapsed (and whose mail another worker claimed) changes nothing. False when it
   * did not. `audit` (the `mail.failed` event of a mail given up) is written in the same transaction.
   */
  async recordAttempt(id: string, leaseToken: string, outcome: MailOutcome, audit?: AuditEvent): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const finished = outcome.status !== 'pending';
      const updated = await trx
        .updateTable('mail_outbox')
        .set((eb) => ({
          attempts: eb('attempts', '+', 1),
          status: outcome.status,
          next_attempt_at: outcome.nextAttemptAt,
          last_error: outcome.error,
          sent_at: outcome.status === 'sent' ? outcome.attemptedAt : null,
          finished_at: finished ? outcome.attemptedAt : null,
          lease_until: null,
          lease_token: null,
        }))
        .where('id', '=', id)
        .where('lease_token', '=', leaseToken)
        .where('status', '=', 'pending')
        .returning('id')
        .executeTakeFirst();
      if (!updated) return false;
      if (audit) await recordAudit(trx, audit);
      return true;
    });
  }

  /** Drops a claimed mail unsent: its link is no longer wanted (a newer one was asked for, the user is gone). */
  async supersede(id: string, leaseToken: string, now: string): Promise<void> {
    await this.db.updateTable('mail_outbox').set({ status: 'superseded', next_attempt_at: null, finished_at: now, lease_until: null, lease_token: null }).where('id', '=', id).where('lease_token', '=', leaseToken).where('status', '=', 'pending').execute();
  }

  /** Gives a claimed mail back unattempted (the server is stopping): due again at once, anywhere. */
  async release(id: string, leaseToken: string): Promise<void> {
    await this.db.updateTable('mail_outbox').set({ lease_until: null, lease_token: null }).where('id', '=', id).where('lease_token', '=', leaseToken).execute();
  }

  /** The newest `limit` mails, of one status or all (the operator's CLI). */
  async list(status: MailStatus | undefined, limit: number): Promise<ListedMail[]> {
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select(['id', 'recipient', 'template', 'status', 'attempts', 'last_error', 'created_at', 'next_attempt_at', 'sent_at'])
      .$if(status !== undefined, (q) => q.where('status', '=', status as MailStatus))
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, recipient: r.recipient, template: r.template, status: r.status, attempts: Number(r.attempts), lastError: r.last_error, createdAt: r.created_at, nextAttemptAt: r.next_attempt_at, sentAt: r.sent_at }));
  }

  /** Mails waiting to be sent, counted up to `cap`: one bounded read of the pending index. */
  async pending(cap: number): Promise<number> {
    const row = await this.db
      .selectFrom((eb) => eb.selectFrom('mail_outbox').select('seq').where('status', '=', 'pending').limit(cap).as('pending'))
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Deletes finished mails (sent, given up, superseded) that finished before `before`; returns how many. */
  async pruneFinished(before: string): Promise<number> {
    const result = await this.db.deleteFrom('mail_outbox').where('finished_at', '<', before).where('status', '!=', 'pending').executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toClaimed(row: Row, leaseToken: string): ClaimedMail {
  return {
    id: row.id,
    userId: row.user_id,
    recipient: row.recipient,
    template: row.template as MailTemplate,
    data: JSON.parse(row.data) as Record<string, string>,
    linkPurpose: row.link_purpose as LinkPurpose | null,
    createdAt: row.created_at,
    attempts: Number(row.attempts),
    leaseToken,
  };
}
