/**
 * The error catalogue: every failure a client can see has one stable `code`, one status and one
 * docs page. Services throw {@link ProblemError}; only `http/problem.ts` turns it into a response.
 */
export const PROBLEMS = {
  validation_failed: {
    status: 400,
    title: 'Validation failed',
    detail: 'The request is not valid. See `errors` for each field.',
    explanation:
      'The request body, a parameter or a header did not meet the documented rules. The `errors` array names each bad field and what is wrong with it. Unknown fields are rejected rather than ignored, so a typo cannot silently weaken a request.',
  },
  invalid_link: {
    status: 400,
    title: 'Invalid link',
    detail: 'This link is not valid. It may have been used already, expired, or been replaced by a newer one.',
    explanation:
      'The token of a verification, password reset or email change link was refused. The answer is the same whether it is unknown, already used, expired, replaced by a newer link or meant for another purpose. Ask for a new link.',
  },
  unauthorized: {
    status: 401,
    title: 'Authentication required',
    detail: 'Send a bearer token in the Authorization header.',
    explanation:
      'The request carried no `Authorization` header, or used a scheme other than `Bearer`. Send `Authorization: Bearer <token>` with a user token (JWT), an API token (`rz_...`) or an app token (`rza_...`). Tokens in the query string or in cookies are not accepted.',
  },
  invalid_token: {
    status: 401,
    title: 'Invalid token',
    detail: 'The access token is missing, malformed, expired or revoked.',
    explanation:
      'The bearer token could not be accepted. It may be malformed, have a bad checksum, be unknown, expired or revoked, carry a bad signature, or belong to a session that logged out. The response never says which check failed. Obtain a new token.',
  },
  invalid_credentials: {
    status: 401,
    title: 'Invalid credentials',
    detail: 'The email or password is incorrect.',
    explanation:
      'Login failed. The response is the same whether the email is unknown or the password is wrong, so it cannot be used to discover accounts.',
  },
  mfa_required: {
    status: 401,
    title: 'Second factor required',
    detail: 'The password is right; finish the login with a second factor at POST /api/auth/mfa/verify.',
    explanation:
      'The account has a second factor (authenticator app, passkey or recovery codes). The answer carries an `mfa_token` (single-use, 5 minutes, 5 attempts) and the `methods` the user has: send it with a code to `POST /api/auth/mfa/verify`. The `mfa_token` is no bearer token: every other route refuses it (docs/mfa.md).',
  },
  insufficient_user_authentication: {
    status: 401,
    title: 'Recent authentication required',
    detail: 'This action needs a recent authentication with your second factor: POST /api/auth/reauth, then retry with the new token.',
    explanation:
      'The action mints or widens credentials or weakens the account, so it needs a user token whose `auth_time` is within `REAUTH_MAX_AGE_S` and, for an account with a second factor, whose `amr` names one (`otp`, `hwk` or `swk`). The `WWW-Authenticate` header carries the RFC 9470 challenge with `max_age`. Get a fresh token for the same session from `POST /api/auth/reauth` and retry.',
  },
  insufficient_scope: {
    status: 403,
    title: 'Insufficient scope',
    detail: 'The token is valid but does not allow this operation.',
    explanation:
      'The token was accepted but its type or scopes do not cover the operation. The `WWW-Authenticate` header names the scope that is needed; `*` means the operation needs a user token (JWT) from login, and `service` a service credential (`rzs_...`). A service credential may call only the introspection and event routes.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    detail: 'This operation is not allowed.',
    explanation: 'The operation is switched off on this server, for example self-service signup.',
  },
  mfa_enrollment_required: {
    status: 403,
    title: 'Second factor enrolment required',
    detail: 'This server requires a second factor: add one under /api/me/mfa, then log in again.',
    explanation:
      'The server runs with `MFA_REQUIRED=true` and the account has no second factor past its grace period, so the login gave a token good only for `GET /api/me`, `POST /api/auth/logout` and the enrolment routes under `/api/me/mfa` (its `aud` is `rz-auth:enroll`, which no other service accepts). Add an authenticator app or a passkey, then log in again with it (docs/mfa.md).',
  },
  email_unverified: {
    status: 403,
    title: 'Email not verified',
    detail: 'Verify your email address before creating tokens or apps.',
    explanation:
      'The server requires a verified email address (EMAIL_VERIFICATION_REQUIRED=true) before a user can create API tokens, register apps, issue app tokens or rotate tokens. Use the link in the verification mail, or ask for a new one with POST /api/auth/verify-email.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    detail: 'The resource does not exist.',
    explanation:
      'No resource exists at this address for the caller. A resource that belongs to someone else is reported exactly like one that does not exist.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    detail: 'This method is not supported on this path.',
    explanation: 'The path exists but does not support the method. The `Allow` header lists the methods that do.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    detail: 'The request conflicts with an existing resource.',
    explanation: 'The resource already exists, for example an account with the same email or username.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    detail: 'The request body is larger than 16 KiB.',
    explanation: 'Request bodies are limited to 16 KiB.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    detail: 'The request did not arrive whole within 10 seconds.',
    explanation: 'The request line, headers and body together must arrive within 10 seconds of the first byte; a slower request is answered with this and its connection closed.',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    detail: 'The request headers are larger than the server accepts.',
    explanation: 'The request line and headers together exceed the server limit (16 KiB). No credential is that long.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    detail: 'Send the body as JSON with Content-Type: application/json.',
    explanation:
      'A request with a body must send `Content-Type: application/json` (parameters are allowed; a charset must be UTF-8). Forms, `text/plain` and other types are refused.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    detail: 'The rate limit was exceeded. Retry after the number of seconds in Retry-After.',
    explanation:
      'The caller exceeded a rate limit. Wait for the number of seconds in the `Retry-After` header. The `RateLimit` and `RateLimit-Policy` headers describe the limit and what remains of it.',
  },
  internal: {
    status: 500,
    title: 'Internal error',
    detail: 'The server could not complete the request.',
    explanation: 'Something failed inside the service. Quote the `request_id` when you report it.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    detail: 'The service cannot complete the request right now. Try again shortly.',
    explanation: 'A backing store (database or Redis) is unreachable or overloaded. Retry with backoff.',
  },
} as const satisfies Record<string, { status: number; title: string; detail: string; explanation: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** The docs page that explains a problem code, e.g. `/problems/invalid-token`: a problem's `type`. */
export const problemType = (code: ProblemCode): string => `/problems/${code.replaceAll('_', '-')}`;

/**
 * The most a problem body holds, in code points and items. Field names and some details quote the
 * client's own text, and a validator reports every bad item of an array: unbounded, a 16 KiB body
 * could be answered with a megabyte. The Problem schema of the API document states the same limits.
 */
export const PROBLEM_LIMITS = { errors: 20, text: 200, detail: 500 } as const;

/** One bad field of a `validation_failed` problem. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export interface ProblemOptions {
  readonly detail?: string;
  readonly errors?: readonly FieldError[];
  readonly headers?: Readonly<Record<string, string>>;
  /** Extension members of the body (RFC 9457 §3.2), such as `mfa_required`'s `mfa_token`. */
  readonly extensions?: Readonly<Record<string, unknown>>;
}

/** A failure with a stable, client-visible code. */
export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly status: number;
  readonly detail: string;
  readonly errors: readonly FieldError[] | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly extensions: Readonly<Record<string, unknown>> | undefined;

  constructor(
    readonly code: ProblemCode,
    options: ProblemOptions = {},
  ) {
    // A client error is an expected answer, not a fault: nothing reads its stack, and capturing one
    // would make a flood of invalid tokens cost more. Server errors keep theirs.
    const problem = PROBLEMS[code];
    const status = problem.status;
    const detail = options.detail ?? problem.detail;
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = status;
    this.detail = detail;
    // A validation error names each bad field (docs/security.md, Hostile input). One that names none (a framework's
    // refusal, HTTP that does not parse) names the request as a whole.
    this.errors = options.errors ?? (code === 'validation_failed' ? [{ field: 'request', message: 'is not valid' }] : undefined);
    this.headers = options.headers ?? {};
    this.extensions = options.extensions;
  }
}

const REALM = 'Bearer realm="rz"';

/** RFC 6750: no credentials at all, or a scheme other than Bearer. */
export const unauthorized = () => new ProblemError('unauthorized', { headers: { 'www-authenticate': REALM } });

/** The longest credential looked at, in a header or an introspection: far beyond any of ours (a JWT is at most 2 KiB). */
export const MAX_TOKEN_LENGTH = 4096;

/**
 * RFC 6750 invalid_token. Deliberately takes no argument: every invalid_token response is
 * byte-identical so it never reveals which check failed.
 */
export const invalidToken = () =>
  new ProblemError('invalid_token', { headers: { 'www-authenticate': `${REALM}, error="invalid_token"` } });

/** The scope `WWW-Authenticate` names on routes only a service credential may call. */
export const SERVICE_SCOPE = 'service';

export const insufficientScope = (scope: string) =>
  new ProblemError('insufficient_scope', {
    headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  });

export const invalidRequest = (detail: string, field = 'authorization') =>
  new ProblemError('validation_failed', {
    detail,
    errors: [{ field, message: detail }],
    headers: { 'www-authenticate': `${REALM}, error="invalid_request"` },
  });

export const validationFailed = (errors: readonly FieldError[], detail?: string) =>
  new ProblemError('validation_failed', { errors, ...(detail ? { detail } : {}) });

export const notFound = () => new ProblemError('not_found');

/** A link token refused: one body whatever the reason (unknown, used, expired, superseded, another purpose). */
export const invalidLink = () => new ProblemError('invalid_link');

export const conflict = (detail: string, field?: string) =>
  new ProblemError('conflict', { detail, ...(field ? { errors: [{ field, message: detail }] } : {}) });
