/** Why a request was refused: each code has one HTTP status. */
export type VerifyErrorCode =
  | 'unauthorized'
  | 'invalid_request'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'insufficient_user_authentication'
  | 'unavailable'
  | 'service_credential_refused'
  | 'rate_limited';

type Status = 400 | 401 | 403 | 429 | 503;

const STATUS: Readonly<Record<VerifyErrorCode, Status>> = {
  unauthorized: 401,
  invalid_request: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  insufficient_user_authentication: 401,
  unavailable: 503,
  service_credential_refused: 503,
  rate_limited: 429,
};

const MESSAGES: Readonly<Record<VerifyErrorCode, string>> = {
  unauthorized: 'Send a bearer token in the Authorization header.',
  invalid_request: 'Send exactly one Authorization header of the form "Bearer <token>".',
  invalid_token: 'The access token is malformed, expired or revoked.',
  insufficient_scope: 'The token is valid but does not allow this operation.',
  insufficient_user_authentication:
    'This operation needs a more recent or a stronger authentication: authenticate again at rz-auth (POST /api/auth/reauth), then retry with the new token.',
  unavailable: 'The token cannot be checked: rz-auth is unreachable. Try again shortly.',
  service_credential_refused: 'The token cannot be checked: rz-auth refused this service\'s own credential. Try again later.',
  rate_limited: 'Too many new tokens to check: try again after the time Retry-After gives.',
};

/**
 * A refused token, ready to answer with: `status`, a stable `code`, and the RFC 6750 challenge for
 * `WWW-Authenticate` (absent for the 503s, which are no statement about the token).
 */
export class VerifyError extends Error {
  readonly status: Status;
  readonly wwwAuthenticate: string | undefined;
  /** Seconds to wait before trying again, for `rate_limited` (the `Retry-After` value). */
  readonly retryAfter: number | undefined;

  constructor(
    readonly code: VerifyErrorCode,
    realm: string,
    options: { scopes?: readonly string[]; maxAge?: number; message?: string; cause?: unknown; retryAfter?: number } = {},
  ) {
    super(options.message ?? MESSAGES[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VerifyError';
    this.status = STATUS[code];
    this.retryAfter = options.retryAfter;
    this.wwwAuthenticate = challenge(code, realm, options);
  }
}

/**
 * RFC 6750 §3: no error attribute when the request carried no credentials, the scopes needed with
 * insufficient_scope; RFC 9470 §3: the `max_age` asked for with insufficient_user_authentication.
 * Realm and scope names are checked at creation to need no escaping, `maxAge` to be a whole number.
 */
function challenge(code: VerifyErrorCode, realm: string, options: { scopes?: readonly string[]; maxAge?: number }): string | undefined {
  // A 503 or a 429 is no statement about the token (RFC 6750 §3 defines no challenge for them).
  if (code === 'unavailable' || code === 'service_credential_refused' || code === 'rate_limited') return undefined;
  if (code === 'unauthorized') return `Bearer realm="${realm}"`;
  const scope = code === 'insufficient_scope' && options.scopes ? `, scope="${options.scopes.join(' ')}"` : '';
  const maxAge = code === 'insufficient_user_authentication' && options.maxAge !== undefined ? `, max_age="${options.maxAge}"` : '';
  return `Bearer realm="${realm}", error="${code}"${scope}${maxAge}`;
}

/** A value that can sit inside a quoted-string of a challenge without escaping. */
export const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,100}$/;

/**
 * rz-auth answered 401 or 403 to a request of this service's own (an introspection, the event
 * stream, the key set): its credential is revoked, mistyped or not a service credential. Not an
 * outage: retrying will not help until an operator acts, so it is told apart and logged.
 */
export class CredentialRefused extends Error {
  constructor(
    readonly request: string,
    readonly status: number,
  ) {
    super(`${request} answered ${status}: rz-auth refused this service's credential`);
    this.name = 'CredentialRefused';
  }
}

/** The statuses rz-auth refuses a credential with (RFC 6750 §3.1: revoked or unknown 401, not a service credential 403). */
export const refusesCredential = (status: number): boolean => status === 401 || status === 403;
