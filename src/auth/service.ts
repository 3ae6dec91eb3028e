import { randomUUID } from 'node:crypto';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { ProblemError } from '../errors.js';
import { printable } from '../lib/text.js';
import type { SessionStore } from '../sessions/store.js';
import type { PasswordHasher } from '../users/hasher.js';
import { MAX_PASSWORD_BYTES, normalizePassword } from '../users/password-policy.js';
import { type NewUserInput, normalizeEmail, type UserService } from '../users/service.js';
import type { User, UserStore } from '../users/store.js';
import type { UserTokens } from './jwt.js';
import type { Principal } from './principal.js';

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

/** Enough for any real browser's User-Agent; longer ones are cut. */
export const MAX_USER_AGENT = 256;

const invalidCredentials = () => new ProblemError('invalid_credentials');

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
    },
  ) {}

  async signup(input: NewUserInput, client: ClientInfo): Promise<SessionGrant> {
    if (!this.deps.signupEnabled) {
      throw new ProblemError('forbidden', { detail: 'Signup is closed on this server. Ask an administrator for an account.' });
    }
    const user = await this.deps.users.create(input);
    return this.startSession(user, client);
  }

  /**
   * Every failure is the same invalid_credentials, and an unknown email still costs one argon2id
   * verification (against a dummy hash), so neither the answer nor its timing reveals accounts.
   */
  async login(email: string, password: string, client: ClientInfo): Promise<SessionGrant> {
    const normalized = normalizePassword(password);
    const user = await this.deps.userStore.findByEmail(normalizeEmail(email));
    if (Buffer.byteLength(normalized) > MAX_PASSWORD_BYTES) throw invalidCredentials();
    const ok = user ? await this.deps.hasher.verify(user.passwordHash, normalized) : await this.deps.hasher.verifyDummy(normalized);
    if (!user || !ok) throw invalidCredentials();
    let verified = user.passwordHash;
    if (this.deps.hasher.needsRehash(verified)) {
      // Parameters were raised since this hash was made: upgrade it now that we know the password.
      const upgraded = await this.deps.hasher.hash(normalized);
      if (await this.deps.userStore.upgradePasswordHash(user.id, upgraded, verified)) verified = upgraded;
    }
    return this.startSession(user, client, verified);
  }

  /** Ends the session behind a user token; the same token is rejected from the next request on. */
  async logout(principal: Principal): Promise<void> {
    await this.deps.sessions.revoke(principal.credentialId, iso(this.deps.clock.now()));
    await this.deps.feed.committed('session', principal.credentialId);
  }

  /**
   * Opens a session. After a login, only while the password is still the one verified
   * (`verifiedHash`): a password changed meanwhile ended every other session, and this login, made
   * with the old password, fails like any wrong password.
   */
  private async startSession(user: User, client: ClientInfo, verifiedHash?: string): Promise<SessionGrant> {
    const now = this.deps.clock.now();
    const sessionId = randomUUID();
    const { token, expiresAt } = await this.deps.userTokens.issue(user.id, sessionId, now);
    const userAgent = printable(client.userAgent ?? '', MAX_USER_AGENT) || null;
    const session = { id: sessionId, userId: user.id, createdAt: iso(now), expiresAt: iso(expiresAt), clientAddress: client.address || null, userAgent };
    if (verifiedHash === undefined) await this.deps.sessions.insert(session);
    else if (!(await this.deps.sessions.insertForPassword(session, verifiedHash))) throw invalidCredentials();
    return { token, user: { id: user.id, email: user.email, username: user.username, createdAt: user.createdAt } };
  }
}
