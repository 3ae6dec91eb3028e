import { auditEvent, type RequestContext } from '../../audit/events.js';
import type { AuditStore } from '../../audit/store.js';
import type { AuthMethod } from '../../lib/amr.js';
import { type Clock, iso } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { MfaVerificationCount } from '../../observability/metrics/mfa.js';
import type { LockoutStore, Reservation } from './lockout-store.js';
import type { MfaEvents } from './mfa-events.js';
import { normalizeRecoveryCode, recoveryCodeDigest } from './recovery-codes.js';
import type { RecoveryCodeStore } from './recovery-code-store.js';
import { checkTotp, type TotpDeps, type TotpRefusal } from './totp-check.js';
import type { AssertionResponse, WebAuthnAssertions, WebAuthnRefusal } from './webauthn-check.js';

/** Contract §12.6: 10 failed second factors per user per 15 minutes, across login, step-up and enrolment. */
export const USER_ATTEMPTS = 10;
export const USER_WINDOW_MS = 15 * 60_000;

/** A second factor as presented (slice of `POST /api/auth/mfa/verify` and `POST /api/auth/reauth`). */
export type PresentedFactor = { readonly method: 'totp' | 'recovery_code'; readonly code: string } | { readonly method: 'webauthn'; readonly credential: AssertionResponse };

/** Why a second factor was refused, for the audit log only (`mfa.challenge_failed` `details.reason`). */
export type Refusal = TotpRefusal | WebAuthnRefusal;

/** Which ceremony a WebAuthn assertion answers: its challenge was issued for that one alone. */
export type FactorPurpose = 'second_factor' | 'reauth';

/** A factor that was accepted: the RFC 8176 methods it adds, and for a recovery code how many are left. */
export interface AcceptedFactor {
  readonly amr: readonly AuthMethod[];
  readonly recoveryCodesRemaining?: number;
}

export interface SecondFactorDeps {
  readonly totp: TotpDeps;
  readonly recoveryCodes: RecoveryCodeStore;
  readonly lockout: LockoutStore;
  readonly webauthn: WebAuthnAssertions;
  readonly audit: AuditStore;
  readonly events: MfaEvents;
  readonly clock: Clock;
  /** `rz_mfa_verifications_total` (docs/operations.md). */
  readonly count: MfaVerificationCount;
}

export const invalidCredentials = () => new ProblemError('invalid_credentials');

/**
 * Checks a user's second factor under the per-user limit: the attempt is reserved before the code
 * is compared and given back only on success (contract §12.6), so N parallel guesses get at most
 * 10 comparisons. Locked: 429 with Retry-After, the right code included. Every refusal is the same
 * `invalid_credentials`; the audit log says why (`mfa.challenge_failed`), and the 10th records
 * `mfa.locked`.
 */
export class SecondFactor {
  constructor(private readonly deps: SecondFactorDeps) {}

  check(userId: string, factor: PresentedFactor, purpose: FactorPurpose, context: RequestContext): Promise<AcceptedFactor> {
    return this.guarded<AcceptedFactor>(userId, factor.method, context, async (now) => {
      if (factor.method !== 'webauthn') return this.compare(userId, factor, now);
      const outcome = await this.deps.webauthn.check({ purpose, userId, challengeId: null }, factor.credential, context);
      return 'refusal' in outcome ? outcome : { amr: outcome.amr };
    });
  }

  /** Runs `compare` under the user's limit: reserved before, given back on success, audited on refusal. */
  async guarded<T extends object>(userId: string, method: PresentedFactor['method'], context: RequestContext, compare: (now: number) => Promise<T | { refusal: Refusal }>): Promise<T> {
    const now = this.deps.clock.now();
    const reservation = await this.deps.lockout.reserve(userId, now, USER_WINDOW_MS, USER_ATTEMPTS);
    if ('lockedUntil' in reservation) {
      this.deps.count(method, 'rate_limited');
      const seconds = Math.max(1, Math.ceil((Date.parse(reservation.lockedUntil) - now) / 1000));
      throw new ProblemError('rate_limited', {
        detail: 'Too many failed second factors for this account. Retry after the number of seconds in Retry-After.',
        headers: { 'retry-after': String(seconds) },
      });
    }
    const outcome = await compare(now);
    if ('refusal' in outcome) {
      this.deps.count(method, outcome.refusal === 'replayed' ? 'replayed' : 'failed');
      throw await this.refused(userId, method, outcome.refusal, reservation, context);
    }
    await this.deps.lockout.release(userId, reservation);
    this.deps.count(method, 'ok');
    return outcome;
  }

  private async compare(userId: string, factor: { readonly method: 'totp' | 'recovery_code'; readonly code: string }, now: number): Promise<AcceptedFactor | { refusal: Refusal }> {
    if (factor.method === 'totp') {
      const result = await checkTotp(this.deps.totp, userId, factor.code, now);
      return result.ok ? { amr: ['otp'] } : { refusal: result.reason };
    }
    const canonical = normalizeRecoveryCode(factor.code);
    if (canonical === null) return { refusal: 'malformed' };
    // The delete is the single use: of parallel uses of one code, one finds the row.
    if (!(await this.deps.recoveryCodes.consume(userId, recoveryCodeDigest(canonical)))) return { refusal: 'mismatch' };
    return { amr: ['otp'], recoveryCodesRemaining: await this.deps.recoveryCodes.remaining(userId) };
  }

  private async refused(userId: string, method: PresentedFactor['method'], reason: Refusal, reservation: Reservation, context: RequestContext): Promise<ProblemError> {
    const now = this.deps.clock.now();
    const subject = { type: 'user' as const, id: userId };
    const failed = auditEvent({ type: 'mfa.challenge_failed', userId, subject, details: { method, reason } }, context, now);
    if (reservation.attempts === USER_ATTEMPTS) {
      // The lock is what the user must hear of (webhook and mail): someone may know their password.
      const lockedUntil = iso(Date.parse(reservation.windowStart) + USER_WINDOW_MS);
      const locked = auditEvent({ type: 'mfa.locked', userId, subject, details: { locked_until: lockedUntil } }, context, now);
      await this.deps.events.record([failed, locked], userId, 'mfa_locked', { locked_until: lockedUntil });
    } else await this.deps.audit.record(failed);
    return invalidCredentials();
  }
}
