import type { Kysely, Transaction } from 'kysely';
import { type AuditEvent, auditEvent, type RequestContext } from '../../audit/events.js';
import { recordAudit } from '../../audit/store.js';
import type { Tables } from '../../db/tables.js';
import type { MailTemplate } from '../../mail/outbox.js';

type Executor = Kysely<Tables> | Transaction<Tables>;

/** The notices of contract §11.5 about second factors. */
export type MfaNoticeTemplate = Extract<MailTemplate, `mfa_${string}`>;

/** Mails the user a notice in the caller's transaction (docs/email.md); null while mail is off. */
export type MfaNotice = (trx: Executor, userId: string, template: MfaNoticeTemplate, data?: Readonly<Record<string, string>>) => Promise<void>;

/**
 * What the user hears about their second factors (contract §12.8): the audit events, which are
 * also the user's webhook events (docs/webhooks.md), and the mailed notice, written in one
 * transaction so that neither exists without the other.
 */
export class MfaEvents {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly notice: MfaNotice | null,
  ) {}

  /** Records `events` with the notice `template` to `userId`, in `trx` when given (the change's own). */
  async record(events: AuditEvent | readonly AuditEvent[], userId: string, template: MfaNoticeTemplate, data: Readonly<Record<string, string>> = {}, trx?: Executor): Promise<void> {
    const notice = this.notice;
    const write = async (db: Executor) => {
      await recordAudit(db, events);
      await notice?.(db, userId, template, data);
    };
    if (trx !== undefined || notice === null) await write(trx ?? this.db);
    else await this.db.transaction().execute(write);
  }

  /** A recovery code was spent (login or step-up): audit `mfa.recovery_code_used` and the notice. */
  recoveryCodeUsed(userId: string, remaining: number, context: RequestContext, now: number): Promise<void> {
    const details = { method: 'recovery_code', recovery_codes_remaining: remaining };
    const event = auditEvent({ type: 'mfa.recovery_code_used', userId, actor: { type: 'user', id: userId }, subject: { type: 'user', id: userId }, details }, context, now);
    return this.record(event, userId, 'mfa_recovery_code_used', { recovery_codes_remaining: String(remaining) });
  }
}
