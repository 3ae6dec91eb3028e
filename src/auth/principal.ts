import type { Authentication } from '../lib/amr.js';

/** The three credential types and how `GET /api/me` names them. */
export type CredentialType = 'user' | 'api_token' | 'app_token';

/** Who is calling, with what credential: the result of authenticating a bearer token. */
export interface Principal {
  readonly type: CredentialType;
  /** `emailVerified`: a link mailed to `email` was used (docs/email.md); EMAIL_VERIFICATION_REQUIRED reads it. */
  readonly user: { readonly id: string; readonly username: string; readonly email: string; readonly emailVerified: boolean };
  /** The session id for a user token, the token id otherwise. */
  readonly credentialId: string;
  /** `["*"]` for a user token; the catalogue scopes chosen for an API or app token. */
  readonly scopes: readonly string[];
  /** Milliseconds since the epoch: when the user token was issued, or the token created. */
  readonly issuedAt: number;
  /** Milliseconds since the epoch, or null for a token that does not expire. */
  readonly expiresAt: number | null;
  readonly app: { readonly id: string; readonly name: string } | null;
  /** The networks an API or app token may be used from; null for anywhere (always for a user token). */
  readonly allowedCidrs: readonly string[] | null;
  /** A user token's `amr` and `auth_time` (contract §12.4); absent for API and app tokens. */
  readonly auth?: Authentication;
  /** A user token with the enrolment audience (contract §12.7): only the enrolment routes accept it. */
  readonly enrollOnly?: true;
  /** A derived child (`rzd_`) of the API or app token named by `credentialId` (contract §14.6). */
  readonly derived?: DerivedUse;
}

/** What a child adds to its parent's principal; its scopes, expiry and networks are the effective ones. */
export interface DerivedUse {
  /** UUID text form. */
  readonly childId: string;
  readonly labels: readonly string[];
  /** The effective audience; undefined without an `aud` caveat. */
  readonly aud: readonly string[] | undefined;
  /** Each `rl` caveat: a bucket keyed by the child id (policy `child`). */
  readonly rl: readonly { readonly q: number; readonly w: number }[];
}

/** A platform service, by its credential (`rzs_`): it may only introspect tokens and read the event stream. */
export interface ServicePrincipal {
  readonly type: 'service';
  readonly credentialId: string;
  readonly name: string;
}

/** Whoever a valid bearer token stands for. */
export type Caller = Principal | ServicePrincipal;
