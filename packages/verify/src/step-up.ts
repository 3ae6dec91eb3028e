import type { Caller } from './caller.js';
import { VerifyError } from './errors.js';

/** What `requireAuth` demands of the caller's login (contract §12.5, RFC 9470). */
export interface AuthRequirement {
  /** A second factor in this login: the token's `amr` holds `otp`, `hwk` or `swk`. */
  readonly mfa?: boolean;
  /** Most seconds since the user last authenticated (the token's `auth_time`). */
  readonly maxAge?: number;
}

/** RFC 8176 methods that prove a second factor, as rz-auth counts them (contract §12.5). */
const STRONG: ReadonlySet<string> = new Set(['otp', 'hwk', 'swk']);

/** Ten years: past that a `maxAge` is a unit mistake (milliseconds given for seconds), not a policy. */
const MAX_AGE_LIMIT = 315_360_000;

const USER_LOGIN_NEEDED = 'This operation needs a user login: an API, app or service token cannot do it, whatever its scopes.';

/** Throws a TypeError for a requirement that is not one: a typo would otherwise demand nothing. */
export function checkAuthRequirement(requirement: unknown, what: string): asserts requirement is AuthRequirement {
  if (typeof requirement !== 'object' || requirement === null) throw new TypeError(`${what}: { mfa?: boolean, maxAge?: seconds }`);
  const { mfa, maxAge } = requirement as { mfa?: unknown; maxAge?: unknown };
  if (mfa !== undefined && typeof mfa !== 'boolean') throw new TypeError(`${what}: mfa must be true or false`);
  if (maxAge !== undefined && !(Number.isSafeInteger(maxAge) && (maxAge as number) > 0 && (maxAge as number) <= MAX_AGE_LIMIT)) {
    throw new TypeError(`${what}: maxAge must be a whole number of seconds from 1 to ${MAX_AGE_LIMIT}`);
  }
}

/**
 * Why `caller` may not do what `requirement` guards, or null. An opaque token (API, app, service)
 * is "something you have" with no login behind it: 403, since no new token of its kind would do.
 * A user token that is too old or lacks a second factor gets RFC 9470's 401 challenge, with the
 * `max_age` asked for, as rz-auth answers on its own step-up routes.
 */
export function authRefusal(caller: Caller, requirement: AuthRequirement, realm: string, now: number): VerifyError | null {
  const { amr, authTime } = caller;
  if (caller.tokenType !== 'user' || amr === undefined || authTime === undefined) {
    return new VerifyError('insufficient_scope', realm, { message: USER_LOGIN_NEEDED });
  }
  const { mfa = false, maxAge } = requirement;
  const strong = !mfa || amr.some((method) => STRONG.has(method));
  const fresh = maxAge === undefined || now - authTime.getTime() <= maxAge * 1000;
  if (strong && fresh) return null;
  return new VerifyError('insufficient_user_authentication', realm, maxAge === undefined ? {} : { maxAge });
}
