import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { auditEvent, type RequestContext } from '../../audit/events.js';
import type { AuditStore } from '../../audit/store.js';
import type { Clock } from '../../clock.js';
import { isUuid } from '../../lib/ids.js';
import type { UserStore } from '../user-store.js';
import type { VerifiedLogin } from './login-service.js';
import { invalidCredentials } from './second-factor.js';
import type { AssertionResponse, WebAuthnAssertions } from './webauthn-check.js';

export interface PasskeyLoginDeps {
  readonly assertions: WebAuthnAssertions;
  readonly users: UserStore;
  readonly audit: AuditStore;
  readonly clock: Clock;
}

/**
 * Login with a passkey alone (contract §12.4): the user is found by the credential id, the user
 * handle must be theirs and the authenticator must have verified the user, so the one credential
 * is two factors (`["hwk"|"swk","user","mfa"]`). No password hash is computed on this path.
 */
export class PasskeyLogin {
  constructor(private readonly deps: PasskeyLoginDeps) {}

  options(): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
    return this.deps.assertions.forPasskey();
  }

  /**
   * Every failure is the same `invalid_credentials` as a wrong password, whatever failed (no
   * challenge, unknown credential, foreign user handle, a bad signature, a cloned counter). The
   * audit records why (`login.failed`, `details.reason`), under no user: the caller proved none.
   */
  async login(challengeId: string, response: AssertionResponse, context: RequestContext): Promise<VerifiedLogin> {
    // A malformed id is no challenge; the store is never asked (PostgreSQL refuses a NUL in text).
    const outcome = isUuid(challengeId) ? await this.deps.assertions.check({ purpose: 'passkey_login', userId: null, challengeId }, response, context) : { refusal: 'no_challenge' as const };
    const user = 'refusal' in outcome ? undefined : await this.deps.users.findById(outcome.credential.userId);
    if ('refusal' in outcome || !user) {
      const details = { method: 'passkey', reason: 'refusal' in outcome ? outcome.refusal : 'unknown_credential' };
      await this.deps.audit.record(auditEvent({ type: 'login.failed', userId: null, subject: null, details }, context, this.deps.clock.now()));
      throw invalidCredentials();
    }
    return { user, amr: outcome.amr };
  }
}
