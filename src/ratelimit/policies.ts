/**
 * The rate-limit policies, their environment variables and defaults. Each is `<requests>/<seconds>`
 * or `off`; `RATE_LIMITS=off` turns every one off.
 */
export const POLICIES = {
  credential: {
    env: 'RATE_LIMIT_CREDENTIAL',
    fallback: '1200/60',
    description: 'Authenticated requests, per user for user tokens and per token for API and app tokens.',
  },
  address: {
    env: 'RATE_LIMIT_ADDRESS',
    fallback: '300/60',
    description: 'Unauthenticated requests and requests with an invalid token, per client address (IPv6 per /64).',
  },
  'login-address': { env: 'RATE_LIMIT_LOGIN_ADDRESS', fallback: '20/60', description: 'Login attempts per client address.' },
  'login-email': {
    env: 'RATE_LIMIT_LOGIN_EMAIL',
    fallback: '10/600',
    description: 'Login attempts per submitted email, whether or not the account exists.',
  },
  'passkey-address': {
    env: 'RATE_LIMIT_PASSKEY_ADDRESS',
    fallback: '20/60',
    description: 'Passkey login options (POST /api/auth/passkey/options) per client address.',
  },
  'signup-address': { env: 'RATE_LIMIT_SIGNUP_ADDRESS', fallback: '10/3600', description: 'Signups per client address.' },
  'signup-email': { env: 'RATE_LIMIT_SIGNUP_EMAIL', fallback: '5/3600', description: 'Signups per submitted email.' },
  'password-reset-address': {
    env: 'RATE_LIMIT_PASSWORD_RESET_ADDRESS',
    fallback: '10/3600',
    description: 'Password reset requests (POST /api/auth/password-reset) per client address.',
  },
  'password-reset-email': {
    env: 'RATE_LIMIT_PASSWORD_RESET_EMAIL',
    fallback: '3/3600',
    description: 'Password reset requests per submitted email, whether or not the account exists.',
  },
  'verify-email': {
    env: 'RATE_LIMIT_VERIFY_EMAIL',
    fallback: '5/3600',
    description: 'New verification mails (POST /api/auth/verify-email) per user; the signup mail is not counted.',
  },
  'leak-report': {
    env: 'RATE_LIMIT_LEAK_REPORT',
    fallback: '60/60',
    description: 'Leak reports (POST /api/tokens/leaked, no authentication) per client address.',
  },
  'device-authorization': {
    env: 'RATE_LIMIT_DEVICE_AUTHORIZATION',
    fallback: '10/60',
    description: 'Device authorization requests (POST /oauth/device_authorization) per client address.',
  },
  'device-token': { env: 'RATE_LIMIT_DEVICE_TOKEN', fallback: '60/60', description: 'Token endpoint polls (POST /oauth/token) per client address, on top of slow_down.' },
  'oauth-revoke': { env: 'RATE_LIMIT_OAUTH_REVOKE', fallback: '60/60', description: 'Token revocations (POST /oauth/revoke) per client address.' },
  'device-lookup-user': {
    env: 'RATE_LIMIT_DEVICE_LOOKUP_USER',
    fallback: '10/900',
    description: 'Failed user code lookups, approvals and denials (POST /api/device/*) per user; successful ones are not counted.',
  },
  'device-lookup-address': { env: 'RATE_LIMIT_DEVICE_LOOKUP_ADDRESS', fallback: '20/900', description: 'Failed user code lookups, approvals and denials per client address.' },
  service: {
    env: 'RATE_LIMIT_SERVICE',
    fallback: '60000/60',
    description: 'Requests of a platform service per service credential: introspections, and openings of the event stream counted apart.',
  },
} as const;

export type PolicyName = keyof typeof POLICIES;

export const POLICY_NAMES = Object.keys(POLICIES) as PolicyName[];

/** The longest window a policy may have, so the longest a client is ever told to wait. */
export const MAX_WINDOW_SECONDS = 86_400;
export const MAX_QUOTA = 1_000_000_000;

/** A quota of requests per window; null when the policy is off. */
export interface Quota {
  readonly quota: number;
  readonly windowSeconds: number;
}

export type RateLimitConfig = Readonly<Record<PolicyName, Quota | null>>;
