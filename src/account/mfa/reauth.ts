import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { auditEvent, type RequestContext } from '../../audit/events.js';
import type { AuditStore } from '../../audit/store.js';
import type { UserTokens } from '../../auth/jwt.js';
import type { ChangeFeed } from '../../changes/feed.js';
import type { Principal } from '../../auth/principal.js';
import { type Clock, iso } from '../../clock.js';
import { invalidToken } from '../../errors.js';
import type { AuthMethod } from '../../lib/amr.js';
import type { PasswordHasher } from '../password-hasher.js';
import { MAX_PASSWORD_BYTES, normalizePassword } from '../password-policy.js';
import type { SessionStore } from '../session-store.js';
import type { UserStore } from '../user-store.js';
import type { FactorStore } from './factor-store.js';
import type { MfaEvents } from './mfa-events.js';
import { invalidCredentials, type PresentedFactor, type SecondFactor } from './second-factor.js';
import type { WebAuthnAssertions } from './webauthn-check.js';

/** What `POST /api/auth/reauth` accepts: the password, or a second factor. */
export type ReauthProof = { readonly password: string } | PresentedFactor;

export interface ReauthDeps {
  readonly secondFactor: SecondFactor;
  readonly assertions: WebAuthnAssertions;
  readonly factors: FactorStore;
  readonly users: UserStore;
  readonly hasher: PasswordHasher;
  readonly sessions: SessionStore;
  readonly userTokens: UserTokens;
  readonly audit: AuditStore;
  readonly events: MfaEvents;
  readonly clock: Clock;
  readonly feed: ChangeFeed;
}

/** The session's methods with the new ones; `mfa` once a password and a second factor are both in. */
function combined(before: readonly AuthMethod[], added: readonly AuthMethod[]): AuthMethod[] {
  const all = new Set<AuthMethod>([...before.filter((m) => m !== 'mfa'), ...added]);
  if (all.has('pwd') && (all.has('otp') || all.has('hwk') || all.has('swk'))) all.add('mfa');
  return [...all];
}

/**
 * Step-up (contract §12.5, RFC 9470): a fresh user token for the same session, with `auth_time`
 * now and the methods just proven. A user with a factor must prove it: the password alone is
 * refused and issues nothing. Second factors count against the per-user limit of §12.6.
 */
export class Reauth {
  constructor(private readonly deps: ReauthDeps) {}

  async reauth(principal: Principal, proof: ReauthProof, context: RequestContext): Promise<string> {
    const userId = principal.user.id;
    let added: readonly AuthMethod[];
    if ('password' in proof) {
      if (await this.deps.factors.hasActive(userId)) throw invalidCredentials();
      await this.checkPassword(userId, proof.password);
      added = ['pwd'];
    } else {
      const accepted = await this.deps.secondFactor.check(userId, proof, 'reauth', context);
      if (accepted.recoveryCodesRemaining !== undefined) await this.deps.events.recoveryCodeUsed(userId, accepted.recoveryCodesRemaining, context, this.deps.clock.now());
      added = accepted.amr;
    }
    const now = this.deps.clock.now();
    const amr = combined(principal.auth?.amr ?? ['pwd'], added);
    const event = auditEvent({ type: 'auth.reauth', userId, actor: { type: 'user', id: userId }, subject: { type: 'session', id: principal.credentialId }, details: { amr } }, context, now);
    const issued = await this.deps.userTokens.issue(userId, principal.credentialId, now, { amr, authTime: now });
    // Not handed out unless the session took its new end: an ended session gets no token.
    if (!(await this.deps.sessions.reauthenticate(principal.credentialId, { amr, authTime: iso(now) }, iso(issued.expiresAt), event))) throw invalidToken();
    // Every instance reads the session's new end before the token is used.
    await this.deps.feed.committed('session', principal.credentialId);
    return issued.token;
  }

  /** Request options for step-up with a passkey or security key: the user's credentials, a challenge bound to them and to step-up. */
  webauthnOptions(principal: Principal): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return this.deps.assertions.forUser(principal.user.id, 'reauth');
  }

  private async checkPassword(userId: string, password: string): Promise<void> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw invalidToken();
    const normalized = normalizePassword(password);
    if (Buffer.byteLength(normalized) > MAX_PASSWORD_BYTES || !(await this.deps.hasher.verify(user.passwordHash, normalized))) throw invalidCredentials();
  }
}
