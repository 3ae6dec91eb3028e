import { DAY_MS } from '../clock.js';
import type { FieldError } from '../errors.js';

/** The operator's rules for token lifetimes (TOKEN_MAX_LIFETIME_DAYS, TOKEN_IDLE_REVOKE_DAYS). */
export interface TokenPolicy {
  /** Every new token expires within this many days; null for no limit. */
  readonly maxLifetimeDays: number | null;
  /** Tokens unused this many days (since creation if never used) are revoked; null for never. */
  readonly idleRevokeDays: number | null;
}

export const NO_POLICY: TokenPolicy = { maxLifetimeDays: null, idleRevokeDays: null };

/**
 * The expiry of a token created at `now` with `requested` (milliseconds, or null for none), or
 * what is wrong with it: it must be in the future and, under a maximum lifetime, given and within it.
 */
export function creationExpiry(requested: number | null, now: number, policy: TokenPolicy, field: string): number | null | FieldError {
  if (requested !== null && !(requested > now)) return { field, message: 'must be in the future' };
  const max = policy.maxLifetimeDays;
  if (max === null) return requested;
  if (requested === null) return { field, message: `is required: tokens on this server expire within ${max} days` };
  if (requested > now + max * DAY_MS) return { field, message: `must be at most ${max} days from now` };
  return requested;
}

/**
 * The expiry of a token that carries no requested one (an app token, a rotation's successor):
 * `lifetimeMs` from now (null for none), capped by the maximum lifetime.
 */
export function impliedExpiry(lifetimeMs: number | null, now: number, policy: TokenPolicy): number | null {
  const cap = policy.maxLifetimeDays === null ? null : now + policy.maxLifetimeDays * DAY_MS;
  const wanted = lifetimeMs === null ? null : now + lifetimeMs;
  if (cap === null) return wanted;
  return wanted === null ? cap : Math.min(wanted, cap);
}

/** Tokens last used (or, never used, created) before this are idle; null when the policy is off. */
export function idleCutoff(now: number, policy: TokenPolicy): number | null {
  return policy.idleRevokeDays === null ? null : now - policy.idleRevokeDays * DAY_MS;
}
