import { MAX_TOKEN_LENGTH, ProblemError } from '../errors.js';
import type { AuthMethod } from '../lib/amr.js';
import type { Authenticator } from './authenticator.js';
import type { Caller, CredentialType } from './principal.js';

/** An RFC 7662 answer about an active token (docs/platform-services.md). */
export interface ActiveToken {
  readonly active: true;
  readonly token_type: CredentialType;
  /** The user the token acts for. */
  readonly sub: string;
  readonly username: string;
  /** Space-separated scopes: `*` for a user token. */
  readonly scope: string;
  /** The token id, or the session id of a user token. */
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly iat: number;
  /** Seconds since the epoch; absent when the token never expires. */
  readonly exp?: number;
  readonly iss: string;
  /** The app id, for app tokens only. */
  readonly client_id?: string;
  /** User tokens only (contract §12.4): RFC 8176 methods and the last authentication, epoch seconds. */
  readonly amr?: AuthMethod[];
  readonly auth_time?: number;
  /**
   * An extension member (RFC 7662 §2.2): the networks the token may be used from, present only
   * for a token with an allow-list. Introspection cannot apply it, since it does not know the
   * service's caller's address; the service must (packages/verify does).
   */
  readonly allowed_cidrs?: string[];
  /** Derived children (contract §14.6): `jti` is then the child id; `parent_id` its parent's id; `aud` its effective audience. */
  readonly derived?: true;
  readonly parent_id?: string;
  readonly aud?: string[];
}

/** Whatever made a token unusable, the answer is this, and nothing more. */
export const INACTIVE = Object.freeze({ active: false as const });

export type Introspection = ActiveToken | typeof INACTIVE;

/**
 * Introspection (RFC 7662) for the platform's services. It asks the very authenticator every route
 * uses, so a token is active exactly when GET /api/me would accept it at that moment; there is no
 * second way of deciding.
 */
export class Introspector {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly issuer: string,
  ) {}

  /** @throws only what is no answer about the token (a store that cannot be reached). */
  async introspect(token: string, audience?: string): Promise<Introspection> {
    // Bounded as a bearer header is: a longer string is no token of ours, and costs no work.
    if (token.length > MAX_TOKEN_LENGTH) return INACTIVE;
    let caller: Caller;
    try {
      // No client address: the service asks on its caller's behalf, and applies the allow-list itself.
      caller = await this.authenticator.authenticate(token, null, audience);
    } catch (error) {
      // The authenticator's refusals are all one invalid_token, so the answer cannot tell them apart either.
      if (error instanceof ProblemError && error.code === 'invalid_token') return INACTIVE;
      throw error;
    }
    // A service credential is no token a service should accept from its callers.
    if (caller.type === 'service') return INACTIVE;
    // A token good only for enrolling a second factor is good for no service (contract §12.7).
    if (caller.enrollOnly) return INACTIVE;
    return {
      active: true,
      token_type: caller.type,
      sub: caller.user.id,
      username: caller.user.username,
      scope: caller.scopes.join(' '),
      jti: caller.credentialId,
      iat: Math.floor(caller.issuedAt / 1000),
      ...(caller.expiresAt === null ? {} : { exp: Math.floor(caller.expiresAt / 1000) }),
      iss: this.issuer,
      ...(caller.app ? { client_id: caller.app.id } : {}),
      ...(caller.auth ? { amr: [...caller.auth.amr], auth_time: Math.floor(caller.auth.authTime / 1000) } : {}),
      ...(caller.allowedCidrs === null ? {} : { allowed_cidrs: [...caller.allowedCidrs] }),
      ...(caller.derived ? { derived: true, parent_id: caller.credentialId, jti: caller.derived.childId, ...(caller.derived.aud ? { aud: [...caller.derived.aud] } : {}) } : {}),
    };
  }
}
