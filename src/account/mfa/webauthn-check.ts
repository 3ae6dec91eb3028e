import { randomBytes, randomUUID } from 'node:crypto';
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { auditEvent, type RequestContext } from '../../audit/events.js';
import type { AuditStore } from '../../audit/store.js';
import { type Clock, iso } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { AuthMethod } from '../../lib/amr.js';
import type { ChallengePurpose, ChallengeStore } from './challenge-store.js';
import type { WebAuthnRelyingParty } from './config.js';
import type { MfaUserStore } from './mfa-user-store.js';
import { assertionOptions, verifyAssertion } from './webauthn-ceremonies.js';
import type { WebAuthnCredential, WebAuthnStore } from './webauthn-store.js';

/** An assertion as the browser gives it (`PublicKeyCredential.toJSON()`). */
export type AssertionResponse = AuthenticationResponseJSON;

/**
 * Why an assertion was refused, for the audit log only: on the wire every refusal is the same
 * `invalid_credentials`. `no_challenge`: unknown, used, expired, or issued for another ceremony or
 * user; `other_user`: a credential that is not the user's (or whose user handle does not match).
 */
export type WebAuthnRefusal = 'no_challenge' | 'unknown_credential' | 'other_user' | 'invalid' | 'clone_suspected';

/** Contract §12.6: a challenge is 32 random bytes and lives 5 minutes. */
export const CHALLENGE_BYTES = 32;
export const CHALLENGE_TTL_MS = 300_000;

/** What a ceremony expects: its purpose, its user (null for passkey login), and its challenge id where the client sends one. */
export interface CeremonyExpectations {
  readonly purpose: ChallengePurpose;
  readonly userId: string | null;
  /** Null: the challenge is its own id, read from `clientDataJSON` (second factor, step-up). */
  readonly challengeId: string | null;
}

export type AssertionOutcome = { readonly credential: WebAuthnCredential; readonly amr: readonly AuthMethod[] } | { readonly refusal: WebAuthnRefusal };

export interface WebAuthnAssertionDeps {
  /** Null when no relying party is configured: passkeys are off. */
  readonly rp: WebAuthnRelyingParty | null;
  readonly challenges: ChallengeStore;
  readonly credentials: WebAuthnStore;
  readonly mfaUsers: MfaUserStore;
  readonly audit: AuditStore;
  readonly clock: Clock;
}

/** The relying party, or 403 when passkeys are off on this server. */
export function relyingParty(rp: WebAuthnRelyingParty | null): WebAuthnRelyingParty {
  if (rp === null) throw new ProblemError('forbidden', { detail: 'Passkeys are off on this server (no WEBAUTHN_RP_ID or PUBLIC_URL).' });
  return rp;
}

/** The challenge a response names in its client data, when it could be one of ours; read only to find the stored one. */
function challengeOf(response: AssertionResponse): string | null {
  try {
    const data: unknown = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
    const challenge = typeof data === 'object' && data !== null && 'challenge' in data ? data.challenge : null;
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{43}$/.test(challenge) ? challenge : null;
  } catch {
    return null;
  }
}

/** RFC 8176: `swk` for a credential that may be synced (BE flag at registration), else `hwk`. */
export const keyMethod = (credential: WebAuthnCredential): AuthMethod => (credential.backupEligible ? 'swk' : 'hwk');

/**
 * WebAuthn assertions (contract §12.4–§12.6): challenges issued per ceremony, and the checks of an
 * answer. The challenge is taken (deleted) before anything else is looked at, whatever follows.
 */
export class WebAuthnAssertions {
  constructor(private readonly deps: WebAuthnAssertionDeps) {}

  /** Stores a fresh challenge for a ceremony; `id` null makes the challenge its own id. */
  async issue(purpose: ChallengePurpose, userId: string | null, id: string | null = null): Promise<{ id: string; challenge: Uint8Array }> {
    const challenge = randomBytes(CHALLENGE_BYTES);
    const value = challenge.toString('base64url');
    const expiresAt = iso(this.deps.clock.now() + CHALLENGE_TTL_MS);
    const stored = { id: id ?? value, purpose, userId, challenge: value, expiresAt };
    await this.deps.challenges.insert(stored);
    return { id: stored.id, challenge };
  }

  /** Request options listing the user's own credentials (second factor, step-up). */
  async forUser(userId: string, purpose: 'second_factor' | 'reauth'): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const rp = relyingParty(this.deps.rp);
    const { challenge } = await this.issue(purpose, userId);
    return assertionOptions(rp, await this.deps.credentials.listForUser(userId), challenge, 'preferred');
  }

  /** Passkey login options: no credential list, user verification required, bound to a new `challenge_id`. */
  async forPasskey(): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
    const rp = relyingParty(this.deps.rp);
    const { id, challenge } = await this.issue('passkey_login', null, randomUUID());
    return { challengeId: id, options: await assertionOptions(rp, null, challenge, 'required') };
  }

  /**
   * Checks an assertion for a ceremony. Passkey login (`userId` null) finds the user by the
   * credential id and requires the user handle to be theirs and the UV flag. The counter is
   * recorded by compare-and-set; one that does not grow flags the factor (`mfa.clone_suspected`).
   */
  async check(expect: CeremonyExpectations, response: AssertionResponse, context: RequestContext): Promise<AssertionOutcome> {
    const challengeId = expect.challengeId ?? challengeOf(response);
    const now = this.deps.clock.now();
    const stored = challengeId === null ? undefined : await this.deps.challenges.take(challengeId, expect.purpose, expect.userId, iso(now));
    if (!stored || this.deps.rp === null) return { refusal: 'no_challenge' };
    const credential = await this.deps.credentials.findByCredentialId(response.id);
    if (!credential) return { refusal: 'unknown_credential' };
    const passkey = expect.userId === null;
    const userHandle = passkey ? (response.response.userHandle ?? '') : null;
    if (!(await this.belongs(credential, expect.userId, userHandle))) return { refusal: 'other_user' };
    const verified = await verifyAssertion(this.deps.rp, response, { challenge: stored.challenge, credential, requireUserVerification: passkey, userHandle });
    if (!verified) return { refusal: 'invalid' };
    const recorded = await this.deps.credentials.recordAssertion(credential.id, { signCount: verified.signCount, backupState: verified.backupState, at: iso(now) });
    if (recorded === 'gone') return { refusal: 'unknown_credential' };
    if (recorded === 'clone_suspected') {
      await this.cloneSuspected(credential, verified.signCount, context);
      return { refusal: 'clone_suspected' };
    }
    return { credential, amr: passkey ? [keyMethod(credential), 'user', 'mfa'] : [keyMethod(credential)] };
  }

  /** The credential is the expected user's; for passkey login, the user handle names its owner. */
  private async belongs(credential: WebAuthnCredential, userId: string | null, userHandle: string | null): Promise<boolean> {
    if (userId !== null) return credential.userId === userId;
    if (!userHandle) return false;
    return (await this.deps.mfaUsers.userByHandle(userHandle)) === credential.userId;
  }

  private async cloneSuspected(credential: WebAuthnCredential, presented: number, context: RequestContext): Promise<void> {
    const subject = { type: 'user' as const, id: credential.userId };
    const details = { factor_id: credential.id, name: credential.name, sign_count: presented };
    await this.deps.audit.record(auditEvent({ type: 'mfa.clone_suspected', userId: credential.userId, subject, details }, context, this.deps.clock.now()));
  }
}
