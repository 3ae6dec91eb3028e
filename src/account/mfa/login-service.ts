import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { auditEvent, type RequestContext } from '../../audit/events.js';
import type { AuditStore } from '../../audit/store.js';
import type { AuthMethod } from '../../lib/amr.js';
import { type Clock, iso } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { SecondFactorGate } from '../service.js';
import type { User, UserStore } from '../user-store.js';
import type { FactorStore } from './factor-store.js';
import type { MfaEvents } from './mfa-events.js';
import type { MfaRequirement } from './requirement.js';
import { newMfaToken, presentedMfaTokenDigest } from './mfa-token.js';
import type { PendingLoginStore } from './pending-login-store.js';
import type { RecoveryCodeStore } from './recovery-code-store.js';
import { invalidCredentials, type PresentedFactor, type SecondFactor } from './second-factor.js';
import type { WebAuthnAssertions } from './webauthn-check.js';

/** Contract §12.4: an `mfa_token` lives 5 minutes and dies after 5 failed attempts. */
export const MFA_TOKEN_TTL_S = 300;
export const MFA_TOKEN_ATTEMPTS = 5;

export type MfaMethod = 'totp' | 'webauthn' | 'recovery_code';

/** A login whose second factor was accepted: whose it is and how the user authenticated. */
export interface VerifiedLogin {
  readonly user: User;
  readonly amr: readonly AuthMethod[];
  readonly recoveryCodesRemaining?: number;
}

export interface MfaLoginDeps {
  readonly factors: FactorStore;
  readonly recoveryCodes: RecoveryCodeStore;
  readonly pending: PendingLoginStore;
  readonly secondFactor: SecondFactor;
  readonly assertions: WebAuthnAssertions;
  readonly users: UserStore;
  readonly audit: AuditStore;
  readonly events: MfaEvents;
  readonly requirement: MfaRequirement;
  readonly clock: Clock;
  /** A CSPRNG; tests pass a fixed one. */
  readonly random?: (size: number) => Buffer;
}

/**
 * Login in two steps (contract §12.4): after the right password, a user with an active factor gets
 * `mfa_required` and an `mfa_token` instead of a session; the token is redeemed once, with a second
 * factor, at `POST /api/auth/mfa/verify`. The token is stored as SHA-256 and is no bearer token:
 * the authenticator never looks it up, so every other route answers it `invalid_token`.
 */
export class MfaLogin implements SecondFactorGate {
  constructor(private readonly deps: MfaLoginDeps) {}

  async begin(user: User, context: RequestContext): Promise<'full' | 'enroll'> {
    const factors = await this.deps.factors.list(user.id);
    if (factors.length === 0) return (await this.deps.requirement.enrolmentDue(user.id, false)) ? 'enroll' : 'full';
    const methods: MfaMethod[] = (['totp', 'webauthn'] as const).filter((type) => factors.some((f) => f.type === type));
    if ((await this.deps.recoveryCodes.remaining(user.id)) > 0) methods.push('recovery_code');
    const now = this.deps.clock.now();
    const { token, digest } = newMfaToken(this.deps.random);
    await this.deps.pending.insert({ digest, userId: user.id, createdAt: iso(now), expiresAt: iso(now + MFA_TOKEN_TTL_S * 1000) });
    const subject = { type: 'user' as const, id: user.id };
    await this.deps.audit.record(auditEvent({ type: 'login.password_ok_mfa_pending', userId: user.id, actor: { type: 'user', id: user.id }, subject }, context, now));
    throw new ProblemError('mfa_required', { extensions: { mfa_token: token, methods, expires_in: MFA_TOKEN_TTL_S } });
  }

  /** A new account has no factor: with MFA_REQUIRED and no grace (MFA_GRACE_DAYS=0), its first token is for enrolment only. */
  async atSignup(userId: string): Promise<'full' | 'enroll'> {
    if (!this.deps.requirement.on) return 'full';
    return (await this.deps.requirement.enrolmentDue(userId, false)) ? 'enroll' : 'full';
  }

  /**
   * Request options for the second step with a passkey or security key: the user's credentials,
   * under a challenge bound to the user and to this purpose. Asking spends none of the token's
   * attempts; a token that could not be redeemed is the same `invalid_credentials`.
   */
  async webauthnOptions(mfaToken: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const digest = presentedMfaTokenDigest(mfaToken);
    const userId = digest === null ? undefined : await this.deps.pending.holder(digest, iso(this.deps.clock.now()), MFA_TOKEN_ATTEMPTS);
    if (userId === undefined) throw invalidCredentials();
    return this.deps.assertions.forUser(userId, 'second_factor');
  }

  /**
   * Redeems an `mfa_token` with a second factor. The token's attempt is reserved before anything
   * is compared (5, then dead), then the user's (§12.6); success ends the token, so of two parallel
   * successes only one opens a session. Every failure is the same `invalid_credentials`.
   */
  async verify(mfaToken: string, factor: PresentedFactor, context: RequestContext): Promise<VerifiedLogin> {
    const digest = presentedMfaTokenDigest(mfaToken);
    if (digest === null) throw invalidCredentials();
    const held = await this.deps.pending.reserveAttempt(digest, iso(this.deps.clock.now()), MFA_TOKEN_ATTEMPTS);
    if (!held) throw invalidCredentials();
    const accepted = await this.deps.secondFactor.check(held.userId, factor, 'second_factor', context);
    if (!(await this.deps.pending.consume(digest))) throw invalidCredentials();
    const user = await this.deps.users.findById(held.userId);
    if (!user) throw invalidCredentials();
    if (accepted.recoveryCodesRemaining !== undefined) await this.deps.events.recoveryCodeUsed(user.id, accepted.recoveryCodesRemaining, context, this.deps.clock.now());
    return { user, amr: ['pwd', ...accepted.amr, 'mfa'], ...(accepted.recoveryCodesRemaining === undefined ? {} : { recoveryCodesRemaining: accepted.recoveryCodesRemaining }) };
  }
}
