import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';
import { auditEvent, type RequestContext } from '../audit/events.js';
import type { AuditStore } from '../audit/store.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { ProblemError } from '../errors.js';
import { cleanUserAgent } from '../lib/user-agent.js';
import type { SessionStore } from './session-store.js';
import type { PasswordHasher } from './password-hasher.js';
import { MAX_PASSWORD_BYTES, normalizePassword } from './password-policy.js';
import { isAccountEmail, type NewUserInput, normalizeEmail, type UserService } from './user-service.js';
import type { User, UserStore } from './user-store.js';
import type { UserTokens } from '../auth/jwt.js';
import type { AuthMethod } from '../lib/amr.js';
import type { Principal } from '../auth/principal.js';

/** What signup and login return: a user token and who it is for. */
export interface SessionGrant {
  readonly token: string;
  readonly user: User;
}

/** Where a login came from, as the HTTP layer saw it: shown to the user in their list of sessions. */
export interface ClientInfo {
  /** The client address as the rate limiter sees it (TRUST_PROXY applied). */
  readonly address: string;
  readonly userAgent: string | undefined;
}

const invalidCredentials = () => new ProblemError('invalid_credentials');

/**
 * The second step of a login (contract §12.4): throws `mfa_required` for a user who has a second
 * factor; answers 'enroll' for a user who must add one first (§12.7), whose token then opens only
 * the enrolment routes.
 */
export interface SecondFactorGate {
  begin(user: User, context: RequestContext): Promise<'full' | 'enroll'>;
  /** At signup: 'enroll' when MFA_REQUIRED allows no grace. */
  atSignup(userId: string): Promise<'full' | 'enroll'>;
}

/** Signup, login and logout: the life of a user session. */
export class AccountService {
  constructor(
    private readonly deps: {
      readonly users: UserService;
      readonly userStore: UserStore;
      readonly sessions: SessionStore;
      readonly hasher: PasswordHasher;
      readonly userTokens: UserTokens;
      readonly feed: ChangeFeed;
      readonly clock: Clock;
      readonly signupEnabled: boolean;
      readonly audit: AuditStore;
      /** Queues the verification mail in the signup's transaction; absent while mail is off. */
      readonly signupMail?: ((trx: Transaction<Tables>, user: User) => Promise<void>) | null;
      readonly secondFactor?: SecondFactorGate;
    },
  ) {}

  async signup(input: NewUserInput, context: RequestContext, client: ClientInfo): Promise<SessionGrant> {
    if (!this.deps.signupEnabled) {
      throw new ProblemError('forbidden', { detail: 'Signup is closed on this server. Ask an administrator for an account.' });
    }
    // The signup's own event covers the session it opens.
    const user = await this.deps.users.create(input, context, this.deps.signupMail ?? undefined);
    return this.startSession(user, client, undefined, (await this.deps.secondFactor?.atSignup(user.id)) ?? 'full');
  }

  /**
   * Every failure is the same invalid_credentials, and an unknown email still costs one argon2id
   * verification (against a dummy hash), so neither the answer nor its timing reveals accounts.
   */
  async login(email: string, password: string, context: RequestContext, client: ClientInfo): Promise<SessionGrant> {
    const normalized = normalizePassword(password);
    // A string no account can have is never looked up (PostgreSQL refuses a NUL in text), and
    // costs the same dummy verification as an unknown email.
    const wanted = normalizeEmail(email);
    const user = isAccountEmail(wanted) ? await this.deps.userStore.findByEmail(wanted) : undefined;
    if (Buffer.byteLength(normalized) > MAX_PASSWORD_BYTES) throw await this.failed(user, context);
    const ok = user ? await this.deps.hasher.verify(user.passwordHash, normalized) : await this.deps.hasher.verifyDummy(normalized);
    if (!user || !ok) throw await this.failed(user, context);
    let verified = user.passwordHash;
    if (this.deps.hasher.needsRehash(verified)) {
      // Parameters were raised since this hash was made: upgrade it now that we know the password.
      const upgraded = await this.deps.hasher.hash(normalized);
      if (await this.deps.userStore.upgradePasswordHash(user.id, upgraded, verified)) verified = upgraded;
    }
    const scope = (await this.deps.secondFactor?.begin(user, context)) ?? 'full';
    return this.startSession(user, client, { hash: verified, context, amr: ['pwd'] }, scope);
  }

  /** Opens the session of a login whose second factor was just verified (contract §12.4). */
  completeLogin(user: User, client: ClientInfo, amr: readonly AuthMethod[], context: RequestContext): Promise<SessionGrant> {
    return this.startSession(user, client, { context, amr });
  }

  /** Ends the session behind a user token; the same token is rejected from the next request on. */
  async logout(principal: Principal, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now();
    const event = auditEvent({ type: 'session.logged_out', userId: principal.user.id, subject: { type: 'session', id: principal.credentialId } }, context, now);
    await this.deps.sessions.revoke(principal.credentialId, iso(now), event);
    await this.deps.feed.committed('session', principal.credentialId);
  }

  /**
   * Records a failed login and returns the error to throw. Every failure writes one event, so the
   * write reveals no more than the answer. An unknown email is nobody's event and records nothing
   * of what was typed; failures are bounded by the login limits, which refuse a request before it
   * gets here.
   */
  private async failed(user: User | undefined, context: RequestContext): Promise<ProblemError> {
    const subject = user ? { type: 'user' as const, id: user.id } : null;
    await this.deps.audit.record(auditEvent({ type: 'login.failed', userId: user?.id ?? null, subject }, context, this.deps.clock.now()));
    return invalidCredentials();
  }

  /**
   * Opens a session. After a login, only while the password is still the one verified
   * (`login.hash`): a password changed meanwhile ended every other session, and this login, made
   * with the old password, fails like any wrong password. A login's `context` records it
   * (`login.succeeded`, in the same transaction as the session).
   */
  private async startSession(user: User, client: ClientInfo, login?: { hash?: string; context: RequestContext; amr: readonly AuthMethod[] }, scope: 'full' | 'enroll' = 'full'): Promise<SessionGrant> {
    const now = this.deps.clock.now();
    const sessionId = randomUUID();
    const amr = login?.amr ?? ['pwd'];
    const { token, expiresAt } = await this.deps.userTokens.issue(user.id, sessionId, now, { amr, authTime: now }, scope === 'enroll');
    const userAgent = cleanUserAgent(client.userAgent);
    const auth = { amr, authTime: iso(now) };
    const session = { id: sessionId, userId: user.id, createdAt: iso(now), expiresAt: iso(expiresAt), clientAddress: client.address || null, userAgent, auth };
    if (login === undefined) {
      await this.deps.sessions.insert(session);
    } else {
      const draft = { type: 'login.succeeded' as const, userId: user.id, actor: { type: 'user' as const, id: user.id }, subject: { type: 'session' as const, id: sessionId } };
      const event = auditEvent({ ...draft, details: { amr: [...amr] } }, login.context, now);
      // A second step has no password in hand: the first step checked it, minutes ago at most.
      if (login.hash === undefined) await this.deps.sessions.insert(session, event);
      else if (!(await this.deps.sessions.insertForPassword(session, login.hash, event))) throw await this.failed(user, login.context);
    }
    return { token, user: { id: user.id, email: user.email, username: user.username, createdAt: user.createdAt } };
  }
}
