import { randomBytes, randomUUID } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { RequestContext } from '../../audit/events.js';
import type { Principal } from '../../auth/principal.js';
import { type Clock, iso } from '../../clock.js';
import { conflict, notFound, validationFailed } from '../../errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ChallengeStore } from './challenge-store.js';
import type { WebAuthnRelyingParty } from './config.js';
import { factorName, type FactorService } from './factor-service.js';
import type { FactorStore, FactorSummary } from './factor-store.js';
import type { MfaUserStore } from './mfa-user-store.js';
import type { StepUp } from './step-up.js';
import { relyingParty, type WebAuthnAssertions } from './webauthn-check.js';
import { registrationOptions, verifyRegistration } from './webauthn-ceremonies.js';
import type { WebAuthnStore } from './webauthn-store.js';

/** Contract §12.3: at most 20 WebAuthn factors per user. */
export const MAX_WEBAUTHN = 20;
/** The user handle: 32 random bytes, never the user id (contract §12.3). */
const HANDLE_BYTES = 32;

export interface WebAuthnEnrolmentDeps {
  readonly rp: WebAuthnRelyingParty | null;
  readonly assertions: WebAuthnAssertions;
  readonly challenges: ChallengeStore;
  readonly credentials: WebAuthnStore;
  readonly mfaUsers: MfaUserStore;
  readonly factors: FactorStore;
  readonly factorService: FactorService;
  readonly stepUp: StepUp;
  readonly clock: Clock;
}

/** Every refused registration is this one answer: nothing says which check failed. */
const refused = () => validationFailed([{ field: 'credential', message: 'The credential could not be verified for this challenge.' }], 'The credential could not be verified.');

/**
 * Adding a passkey or security key (contract §12.3): creation options bound to the user and a
 * `challenge_id`, then the registration. Both need a recent login (§12.5), also from a user
 * without a factor, like every write under `/api/me/mfa`.
 */
export class WebAuthnEnrolment {
  constructor(private readonly deps: WebAuthnEnrolmentDeps) {}

  async options(principal: Principal): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    const rp = relyingParty(this.deps.rp);
    const userId = principal.user.id;
    const handle = await this.deps.mfaUsers.userHandle(userId, randomBytes(HANDLE_BYTES).toString('base64url'));
    const existing = await this.deps.credentials.listForUser(userId);
    const { id, challenge } = await this.deps.assertions.issue('register', userId, randomUUID());
    return { challengeId: id, options: await registrationOptions(rp, { username: principal.user.username, handle }, existing, challenge) };
  }

  /**
   * Registers the credential of a creation ceremony. The challenge is taken first, whatever
   * follows; a credential id registered already, to this user or another, is 409.
   */
  async register(principal: Principal, challengeId: string, name: string, response: RegistrationResponseJSON, context: RequestContext): Promise<{ factor: FactorSummary; recoveryCodes?: string[] }> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    const rp = relyingParty(this.deps.rp);
    const label = factorName(name);
    const userId = principal.user.id;
    const now = this.deps.clock.now();
    // A malformed id is no challenge; the store is never asked (PostgreSQL refuses a NUL in text).
    const stored = isUuid(challengeId) ? await this.deps.challenges.take(challengeId, 'register', userId, iso(now)) : undefined;
    if (!stored) throw refused();
    const verified = await verifyRegistration(rp, response, stored.challenge);
    if (!verified) throw refused();
    const first = !(await this.deps.factors.hasActive(userId));
    const id = randomUUID();
    const activation = this.deps.factorService.activation(userId, first, context);
    const outcome = await this.deps.credentials.insert({ ...verified, id, userId, name: label, createdAt: iso(now) }, MAX_WEBAUTHN, activation.writes({ type: 'webauthn', name: label }));
    if (outcome === 'duplicate') throw conflict('This credential is registered already.', 'credential');
    if (outcome === 'cap') throw conflict(`At most ${MAX_WEBAUTHN} passkeys and security keys per account.`);
    if (outcome === 'gone') throw notFound();
    return this.deps.factorService.added(userId, id, activation);
  }
}
