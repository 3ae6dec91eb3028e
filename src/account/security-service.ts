import type { AuthMethod } from '../lib/amr.js';
import { type AuditEvent, auditEvent, type RequestContext } from '../audit/events.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../changes/feed.js';
import type { ChangeTransaction } from '../changes/store.js';
import { type Clock, iso } from '../clock.js';
import { invalidToken, notFound, ProblemError, validationFailed } from '../errors.js';
import { isUuid } from '../lib/ids.js';
import type { LastUseRecorder } from '../lib/last-use.js';
import { keysetPage, type Page, type PageRequest } from '../lib/pages.js';
import type { PasswordHasher } from './password-hasher.js';
import { MAX_PASSWORD_BYTES, normalizePassword } from './password-policy.js';
import type { UserService } from './user-service.js';
import type { UserStore, UserWithHash } from './user-store.js';
import type { SessionStore } from './session-store.js';

/** A session as its owner sees it in the list. */
export interface SessionView {
  readonly id: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly clientAddress: string | null;
  readonly userAgent: string | null;
  /** RFC 8176 methods and time of the session's last authentication (contract §12.4). */
  readonly amr: readonly AuthMethod[];
  readonly authTime: string;
  /** The session of the user token that asked. */
  readonly current: boolean;
}

export interface AccountSecurityDeps {
  readonly sessions: SessionStore;
  readonly userStore: UserStore;
  readonly users: UserService;
  readonly hasher: PasswordHasher;
  readonly usage: LastUseRecorder;
  readonly feed: ChangeFeed;
  readonly clock: Clock;
  /** Mails the `password_changed` notice in the changing transaction; absent while mail is off. */
  readonly passwordChanged?: ((trx: ChangeTransaction, userId: string) => Promise<void>) | null;
}

/**
 * One `session.revoked` per session ended, each in its owner's log with why: `ended` (that
 * session alone), `others_ended` (every session but the caller's), `password_changed`.
 */
export const sessionsEnded = (userId: string, ended: readonly string[], reason: string, context: RequestContext, now: number): AuditEvent[] =>
  ended.map((id) => auditEvent({ type: 'session.revoked', userId, subject: { type: 'session', id }, details: { reason } }, context, now));

/** The latest of two ISO 8601 UTC times (they compare as strings), either possibly absent. */
const latest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a >= b ? a : b);

/**
 * A signed-in user's own account: their password, their sessions, closing the account. Every
 * operation needs the user token of a live session (the routes let no other token in); the ones
 * that change the password or close the account also need the password itself, so a stolen user
 * token alone can neither lock the owner out nor destroy the account.
 */
export class AccountSecurity {
  constructor(private readonly deps: AccountSecurityDeps) {}

  /**
   * Sets a new password and ends every other session of the user, on every instance before this
   * returns: the usual reason to change a password is that someone else may know it.
   * @throws invalid_credentials for a wrong current password, validation_failed naming new_password,
   * invalid_token when a change from another session ended this one first
   */
  async changePassword(principal: Principal, currentPassword: string, newPassword: string, context: RequestContext): Promise<void> {
    const user = await this.verifiedUser(principal, currentPassword);
    const next = normalizePassword(newPassword);
    const problem = this.deps.users.checkPassword(next, user);
    if (problem) throw validationFailed([{ field: 'new_password', message: problem.message }]);
    const hash = await this.deps.hasher.hash(next);
    const now = this.deps.clock.now();
    const events = (ended: readonly string[]) => [
      auditEvent({ type: 'password.changed', userId: user.id, subject: { type: 'user', id: user.id }, details: { sessions_ended: ended.length } }, context, now),
      ...sessionsEnded(user.id, ended, 'password_changed', context, now),
    ];
    // Ended by a change from another session that committed first: this token no longer counts.
    const notice = this.deps.passwordChanged;
    const also = notice ? (trx: ChangeTransaction) => notice(trx, user.id) : undefined;
    if ((await this.deps.sessions.replacePassword(user.id, hash, principal.credentialId, iso(now), events, also)) === null) throw invalidToken();
    await this.deps.feed.committed('session', principal.credentialId);
  }

  /** A page of the caller's active sessions, newest first, each with its last use as this instance knows it. */
  async list(principal: Principal, page: PageRequest): Promise<Page<SessionView>> {
    const { items, nextCursor } = keysetPage(await this.deps.sessions.listActive(principal.user.id, this.now(), page), page);
    const views = items.map((s) => ({
      id: s.id,
      createdAt: s.createdAt,
      lastUsedAt: latest(s.lastUsedAt, this.deps.usage.pendingUse(s.id)),
      clientAddress: s.clientAddress,
      userAgent: s.userAgent,
      amr: s.amr,
      authTime: s.authTime,
      current: s.id === principal.credentialId,
    }));
    return { items: views, nextCursor };
  }

  /**
   * Ends one of the caller's sessions (the current one too, which is logging out).
   * @throws not_found for a malformed id, another user's session or one no longer active, alike
   */
  async revoke(principal: Principal, sessionId: string, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now();
    const events = (ended: readonly string[]) => sessionsEnded(principal.user.id, ended, 'ended', context, now);
    if (!isUuid(sessionId) || !(await this.deps.sessions.revokeOwned(sessionId, principal.user.id, iso(now), events))) throw notFound();
    await this.deps.feed.committed('session', sessionId);
  }

  /** Ends every session of the caller but the current one. */
  async revokeOthers(principal: Principal, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now();
    const events = (ended: readonly string[]) => sessionsEnded(principal.user.id, ended, 'others_ended', context, now);
    const revoked = await this.deps.sessions.revokeOthers(principal.user.id, principal.credentialId, iso(now), events);
    if (revoked.length > 0) await this.deps.feed.committed('session', principal.credentialId);
  }

  /**
   * Deletes the account with its tokens, apps, app tokens and sessions. The username and email
   * become free again: every credential names the user by id, which is never reused.
   * @throws invalid_credentials for a wrong password
   */
  async deleteAccount(principal: Principal, password: string, context: RequestContext): Promise<void> {
    const user = await this.verifiedUser(principal, password);
    await this.deps.users.delete(user.id, context);
  }

  /** The caller's account, once `password` is proven to be its password. */
  private async verifiedUser(principal: Principal, password: string): Promise<UserWithHash> {
    const user = await this.deps.userStore.findById(principal.user.id);
    // Deleted while this request was under way: its token is no longer valid.
    if (!user) throw invalidToken();
    const normalized = normalizePassword(password);
    const ok = Buffer.byteLength(normalized) <= MAX_PASSWORD_BYTES && (await this.deps.hasher.verify(user.passwordHash, normalized));
    if (!ok) throw new ProblemError('invalid_credentials', { detail: 'The password is incorrect.' });
    return user;
  }

  private now(): string {
    return iso(this.deps.clock.now());
  }
}
