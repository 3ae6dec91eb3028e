import { type AuditEvent, auditEvent, type RequestContext } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../changes/feed.js';
import type { ChangeTransaction } from '../changes/store.js';
import { type Clock, iso } from '../clock.js';
import { isUniqueViolation } from '../db/dialect.js';
import { conflict, invalidLink, invalidToken, notFound, ProblemError, validationFailed } from '../errors.js';
import { enqueueMail, type LinkPurpose, type MailTemplate, supersedeMails } from '../mail/outbox.js';
import type { EmailStore, ResetRequest } from './email-store.js';
import { consumeLinkToken, deleteLinks, isLiveLink } from './link-store.js';
import { linkDigest } from './links.js';
import type { PasswordHasher } from './password-hasher.js';
import { MAX_PASSWORD_BYTES, normalizePassword } from './password-policy.js';
import { revokeAndRecord } from './session-store.js';
import { isPlainMailbox, normalizeEmail, type UserService } from './user-service.js';
import type { StoredUser } from './user-store.js';

type Executor = Parameters<typeof enqueueMail>[0];

/** Verification, password reset and email change (contract §11.4, docs/email.md). */
export interface EmailFlows {
  requestVerification(principal: Principal, context: RequestContext): Promise<void>;
  confirmVerification(token: string, context: RequestContext): Promise<void>;
  requestPasswordReset(email: string, context: RequestContext): Promise<void>;
  confirmPasswordReset(token: string, newPassword: string, context: RequestContext): Promise<void>;
  requestEmailChange(principal: Principal, email: string, password: string, context: RequestContext): Promise<void>;
  confirmEmailChange(token: string, context: RequestContext): Promise<void>;
}

/** Mail off (no SMTP_URL): every flow answers 404, as if its route did not exist. */
export const MAIL_OFF: EmailFlows = {
  requestVerification: () => Promise.reject(notFound()),
  confirmVerification: () => Promise.reject(notFound()),
  requestPasswordReset: () => Promise.reject(notFound()),
  confirmPasswordReset: () => Promise.reject(notFound()),
  requestEmailChange: () => Promise.reject(notFound()),
  confirmEmailChange: () => Promise.reject(notFound()),
};

export interface EmailAccountDeps {
  readonly store: EmailStore;
  readonly users: UserService;
  readonly hasher: PasswordHasher;
  readonly feed: ChangeFeed;
  readonly clock: Clock;
  /** Where a failed drain of reset requests is reported; the next maintenance round retries it. */
  readonly onError: (error: unknown, context: string) => void;
}

/** The mail of a user's notice or link, written with the transaction of what causes it. */
export class Mailer {
  constructor(private readonly clock: Clock) {}

  /**
   * A security notice (§11.5), to the user's address only once it is proven: a notice to an
   * address nobody proved could be mail to a stranger. `to` overrides the address (the old one
   * after an email change).
   */
  async notice(trx: Executor, user: StoredUser, template: MailTemplate, data: Record<string, string> = {}, to = user.email): Promise<void> {
    if (user.emailVerifiedAt === null || !isPlainMailbox(to)) return;
    await enqueueMail(trx, { userId: user.id, recipient: to, template, data: { username: user.username, ...data } }, this.clock.now());
  }

  /** A mail with a link of `purpose`: every earlier link of that purpose dies, pending mails of it are superseded. */
  async link(trx: Executor, user: { readonly id: string; readonly username: string }, to: string, template: MailTemplate, purpose: LinkPurpose): Promise<string> {
    await supersedeMails(trx, user.id, purpose);
    await deleteLinks(trx, user.id, purpose);
    return enqueueMail(trx, { userId: user.id, recipient: to, template, data: { username: user.username }, linkPurpose: purpose }, this.clock.now());
  }
}

/** The reset requests one drain takes at most. */
const DRAIN_BATCH = 50;

/** The email flows with mail on. */
export class EmailAccount implements EmailFlows {
  private readonly mailer: Mailer;
  private draining: Promise<void> | null = null;

  constructor(private readonly deps: EmailAccountDeps) {
    this.mailer = new Mailer(deps.clock);
  }

  /** @throws conflict when already verified */
  async requestVerification(principal: Principal, context: RequestContext): Promise<void> {
    const { store } = this.deps;
    await store.transaction(async (trx) => {
      const user = await this.liveUser(trx, principal.user.id);
      if (user.emailVerifiedAt !== null) throw conflict('The email is already verified.');
      if (!isPlainMailbox(user.email)) throw unmailable();
      await this.mailer.link(trx, user, user.email, 'verify_email', 'verify_email');
      await recordAudit(trx, this.event('email.verification_sent', user.id, context));
    });
  }

  async confirmVerification(token: string, context: RequestContext): Promise<void> {
    const userId = await this.withLink(token, 'verify_email', async (trx, link, now) => {
      if (!(await this.deps.store.markVerified(trx, link.userId, link.email, iso(now)))) throw invalidLink();
      await recordAudit(trx, this.event('email.verified', link.userId, context));
    });
    await this.deps.feed.committed('user', userId);
  }

  /**
   * One insert, whether or not an account has the email: the request path does the same work
   * either way, so neither the answer nor its timing tells. The lookup and the mail happen in
   * {@link drainResetRequests}, off the request path.
   */
  async requestPasswordReset(email: string, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.store.insertResetRequest({ email: normalizeEmail(email), address: context.address, user_agent: context.userAgent, request_id: context.requestId, created_at: iso(now) });
    setImmediate(() => void this.drainResetRequests().catch((error: unknown) => this.deps.onError(error, 'password reset requests')));
  }

  /**
   * Answers queued reset requests: for an account with the email, a mail with a new reset link
   * (the old one dies) and `password.reset_requested`, in the transaction that takes the request;
   * for any other email nothing is recorded. Run after each request and by the background loop
   * (requests of a crashed instance, or of another one).
   */
  drainResetRequests(): Promise<void> {
    this.draining ??= this.drain().finally(() => (this.draining = null));
    return this.draining;
  }

  private async drain(): Promise<void> {
    const { store } = this.deps;
    for (let batch = await store.pendingResetRequests(DRAIN_BATCH); batch.length > 0; batch = await store.pendingResetRequests(DRAIN_BATCH)) {
      for (const request of batch) await store.transaction((trx) => this.answerReset(trx, request));
    }
  }

  private async answerReset(trx: ChangeTransaction, request: ResetRequest & { seq: number }): Promise<void> {
    if (!(await this.deps.store.takeResetRequest(trx, request.seq))) return;
    const user = await this.deps.store.findUserByEmail(trx, request.email);
    // An address stored before the plain-mailbox rule gets no mail: a mailer could misread it.
    if (!user || !isPlainMailbox(user.email)) return;
    await this.mailer.link(trx, user, user.email, 'reset_password', 'reset_password');
    const context: RequestContext = { actor: { type: 'anonymous', id: null }, address: request.address, userAgent: request.user_agent, requestId: request.request_id };
    await recordAudit(trx, this.event('password.reset_requested', user.id, context));
  }

  /** @throws invalid_link, or validation_failed naming new_password (the link stays usable) */
  async confirmPasswordReset(token: string, newPassword: string, context: RequestContext): Promise<void> {
    const next = normalizePassword(newPassword);
    const digest = linkDigest(token);
    // The argon2 hash is the costly part: a token that is not a live reset link never gets there.
    if (digest === null || !(await isLiveLink(this.deps.store.reader, digest, 'reset_password', iso(this.deps.clock.now())))) throw invalidLink();
    const hash = await this.deps.hasher.hash(next);
    const userId = await this.withLink(token, 'reset_password', async (trx, link, now) => {
      const user = await this.liveUser(trx, link.userId, invalidLink);
      const problem = Buffer.byteLength(next) > MAX_PASSWORD_BYTES ? { message: 'must be at most 1024 bytes' } : this.deps.users.checkPassword(next, user);
      if (problem) throw validationFailed([{ field: 'new_password', message: problem.message }]);
      if (!(await this.deps.store.resetPassword(trx, user.id, link.email, hash, iso(now)))) throw invalidLink();
      // Every session ends; API and app tokens stay, the user's deliberate grants.
      const ended = await revokeAndRecord(trx, user.id, iso(now), {}, (ids) => this.sessionsEnded(user.id, ids, 'password_reset', context));
      await recordAudit(trx, this.event('password.reset', user.id, context, { sessions_ended: ended.length }));
      await this.mailer.notice(trx, { ...user, emailVerifiedAt: user.emailVerifiedAt ?? iso(now) }, 'password_reset');
    });
    await this.deps.feed.committed('user', userId);
  }

  /** @throws invalid_credentials for a wrong password, validation_failed naming email */
  async requestEmailChange(principal: Principal, email: string, password: string, context: RequestContext): Promise<void> {
    const wanted = normalizeEmail(email);
    const user = await this.liveUser(null, principal.user.id);
    const normalized = normalizePassword(password);
    const ok = Buffer.byteLength(normalized) <= MAX_PASSWORD_BYTES && (await this.deps.hasher.verify(user.passwordHash, normalized));
    if (!ok) throw new ProblemError('invalid_credentials', { detail: 'The password is incorrect.' });
    if (!isPlainMailbox(wanted)) throw validationFailed([{ field: 'email', message: 'must be one plain email address (name@example.com)' }]);
    if (wanted === user.email) throw validationFailed([{ field: 'email', message: 'is already the address of this account' }]);
    const now = this.deps.clock.now();
    // A taken address is not told here (no enumeration): its confirmation answers 409.
    await this.deps.store.transaction(async (trx) => {
      const mailId = await this.mailer.link(trx, user, wanted, 'confirm_email_change', 'change_email');
      await this.deps.store.saveChangeRequest(trx, mailId, user.id, principal.credentialId, iso(now));
      await this.mailer.notice(trx, user, 'email_change_requested');
      await recordAudit(trx, this.event('email.change_requested', user.id, context));
    });
  }

  /** @throws invalid_link, or conflict when the address was taken meanwhile */
  async confirmEmailChange(token: string, context: RequestContext): Promise<void> {
    const userId = await this.withLink(token, 'change_email', async (trx, link, now) => {
      const user = await this.liveUser(trx, link.userId, invalidLink);
      const keep = await this.deps.store.takeChangeRequest(trx, link.mailId);
      if (keep === undefined) throw invalidLink();
      try {
        await this.deps.store.changeEmail(trx, user.id, link.email, iso(now));
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('An account with this email already exists.', 'email');
        throw error;
      }
      const ended = await revokeAndRecord(trx, user.id, iso(now), { except: keep }, (ids) => this.sessionsEnded(user.id, ids, 'email_changed', context));
      await recordAudit(trx, this.event('email.changed', user.id, context, { sessions_ended: ended.length }));
      // To the old address: whoever holds it learns the account moved away from it.
      await this.mailer.notice(trx, user, 'email_changed');
    });
    await this.deps.feed.committed('user', userId);
  }

  /** Runs `work` with the link `token` consumed, in one transaction; returns the link's user. */
  private async withLink(
    token: string,
    purpose: LinkPurpose,
    work: (trx: ChangeTransaction, link: { userId: string; mailId: string; email: string }, now: number) => Promise<void>,
  ): Promise<string> {
    const digest = linkDigest(token);
    if (digest === null) throw invalidLink();
    const now = this.deps.clock.now();
    return this.deps.store.transaction(async (trx) => {
      const link = await consumeLinkToken(trx, digest, purpose, iso(now));
      if (!link) throw invalidLink();
      await work(trx, link, now);
      return link.userId;
    });
  }

  private async liveUser(trx: Executor | null, id: string, gone: () => Error = invalidToken): Promise<StoredUser> {
    const user = await this.deps.store.findUser(trx ?? this.deps.store.reader, id);
    if (!user) throw gone();
    return user;
  }

  private event(type: AuditEvent['type'], userId: string, context: RequestContext, details: AuditEvent['details'] = {}): AuditEvent {
    return auditEvent({ type, userId, subject: { type: 'user', id: userId }, details }, context, this.deps.clock.now());
  }

  private sessionsEnded(userId: string, ended: readonly string[], reason: string, context: RequestContext): AuditEvent[] {
    const now = this.deps.clock.now();
    return ended.map((id) => auditEvent({ type: 'session.revoked', userId, subject: { type: 'session', id }, details: { reason } }, context, now));
  }
}

/** An address stored before the plain-mailbox rule: no mail is sent to it until it is changed. */
const unmailable = () => validationFailed([{ field: 'email', message: 'is not one plain email address; change it first' }]);
