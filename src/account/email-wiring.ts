import type { Kysely, Transaction } from 'kysely';
import { auditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import type { Tables } from '../db/tables.js';
import type { MailTemplate } from '../mail/outbox.js';
import type { Sweep } from '../maintenance/runner.js';
import { EmailAccount, type EmailFlows, MAIL_OFF, Mailer } from './email-service.js';
import type { AccountEmailConfig } from './email-config.js';
import { EmailStore } from './email-store.js';
import { deleteExpiredLinks } from './link-store.js';
import { LinkTokens } from './links.js';
import type { PasswordHasher } from './password-hasher.js';
import type { UserService } from './user-service.js';
import type { User } from './user-store.js';
import type { MfaNotice } from './mfa/mfa-events.js';

type Executor = Kysely<Tables> | Transaction<Tables>;

/** What the composition root hands the rest: the flows, the worker's minter, the hooks that mail notices. */
export interface EmailParts {
  readonly flows: EmailFlows;
  /** For the mail worker; null while mail is off. */
  readonly links: LinkTokens | null;
  readonly signupMail: ((trx: Transaction<Tables>, user: User) => Promise<void>) | null;
  readonly passwordChanged: ((trx: Executor, userId: string) => Promise<void>) | null;
  readonly tokenLeaked: ((trx: Executor, userId: string, data: Record<string, string>) => Promise<void>) | null;
  readonly deviceApproved: ((trx: Executor, userId: string, data: Record<string, string>) => Promise<void>) | null; // notice of a device login approved (docs/device-flow.md)
  /** The notices of second-factor changes (contract §11.5, §12.8). */
  readonly mfaNotice: MfaNotice | null;
  /** Maintenance: expired link digests, and reset requests an instance left unanswered (it crashed). */
  readonly sweeps: readonly Sweep[];
}

/** The email flows (docs/email.md): with mail off, every route 404 and nothing is mailed. */
export function emailParts(
  db: Kysely<Tables>,
  mailOn: boolean,
  config: AccountEmailConfig,
  deps: { readonly users: UserService; readonly hasher: PasswordHasher; readonly feed: ChangeFeed; readonly clock: Clock; readonly onError: (error: unknown, context: string) => void },
): EmailParts {
  if (!mailOn) return { flows: MAIL_OFF, links: null, signupMail: null, passwordChanged: null, tokenLeaked: null, deviceApproved: null, mfaNotice: null, sweeps: [] };
  const store = new EmailStore(db);
  const mailer = new Mailer(deps.clock);
  const flows = new EmailAccount({ store, ...deps });
  const mail = async (trx: Executor, userId: string, template: MailTemplate, data: Readonly<Record<string, string>> = {}) => {
    const user = await store.findUser(trx, userId);
    if (user) await mailer.notice(trx, user, template, { ...data });
  };
  const notice = (template: 'password_changed' | 'token_leaked' | 'device_approved') => (trx: Executor, userId: string, data: Record<string, string> = {}) => mail(trx, userId, template, data);
  return {
    flows,
    links: new LinkTokens({ verify_email: config.verifyTtlMs, change_email: config.verifyTtlMs, reset_password: config.resetTtlMs }, deps.clock),
    signupMail: async (trx, user) => {
      // The signup mail is not counted against the verify-email limit.
      await mailer.link(trx, user, user.email, 'verify_email', 'verify_email');
      const now = deps.clock.now();
      await recordAudit(trx, auditEvent({ type: 'email.verification_sent', userId: user.id, subject: { type: 'user', id: user.id } }, { actor: { type: 'user', id: user.id }, address: null, userAgent: null, requestId: null }, now));
    },
    passwordChanged: notice('password_changed'),
    tokenLeaked: notice('token_leaked'),
    deviceApproved: notice('device_approved'),
    mfaNotice: mail,
    sweeps: [
      { name: 'expired link tokens', run: (now) => deleteExpiredLinks(db, iso(now)) },
      { name: 'reset requests', run: () => flows.drainResetRequests() },
    ],
  };
}
