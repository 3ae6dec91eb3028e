/** Why a request was refused: each code has one HTTP status. */
export type VerifyErrorCode = 'unauthorized' | 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'unavailable';

const STATUS: Readonly<Record<VerifyErrorCode, 400 | 401 | 403 | 503>> = {
  unauthorized: 401,
  invalid_request: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  unavailable: 503,
};

const MESSAGES: Readonly<Record<VerifyErrorCode, string>> = {
  unauthorized: 'Send a bearer token in the Authorization header.',
  invalid_request: 'Send exactly one Authorization header of the form "Bearer <token>".',
  invalid_token: 'The access token is malformed, expired or revoked.',
  insufficient_scope: 'The token is valid but does not allow this operation.',
  unavailable: 'The token cannot be checked: rz-auth is unreachable. Try again shortly.',
};

/**
 * A refused token, ready to answer with: `status`, a stable `code`, and the RFC 6750 challenge for
 * `WWW-Authenticate` (absent for `unavailable`, which is no statement about the token).
 */
export class VerifyError extends Error {
  readonly status: 400 | 401 | 403 | 503;
  readonly wwwAuthenticate: string | undefined;

  constructor(
    readonly code: VerifyErrorCode,
    realm: string,
    options: { scopes?: readonly string[]; cause?: unknown } = {},
  ) {
    super(MESSAGES[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VerifyError';
    this.status = STATUS[code];
    this.wwwAuthenticate = challenge(code, realm, options.scopes);
  }
}

/**
 * RFC 6750 §3: no error attribute when the request carried no credentials, the scopes needed with
 * insufficient_scope. Realm and scope names are checked at creation to need no escaping.
 */
function challenge(code: VerifyErrorCode, realm: string, scopes: readonly string[] | undefined): string | undefined {
  if (code === 'unavailable') return undefined;
  if (code === 'unauthorized') return `Bearer realm="${realm}"`;
  const scope = code === 'insufficient_scope' && scopes ? `, scope="${scopes.join(' ')}"` : '';
  return `Bearer realm="${realm}", error="${code}"${scope}`;
}

/** A value that can sit inside a quoted-string of a challenge without escaping. */
export const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,100}$/;
