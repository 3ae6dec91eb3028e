/** Who made a request, as rz-auth vouches for it. */
export interface Caller {
  readonly userId: string;
  readonly tokenType: 'user' | 'api_token' | 'app_token';
  /** The API or app token's id; for a user token (JWT), its session's id. */
  readonly tokenId: string;
  /** The token's scopes; a user token has every scope, `['*']`. */
  readonly scopes: readonly string[];
  /** The app of an app token. */
  readonly appId?: string;
  readonly username?: string;
  /** Absent for a token that never expires. */
  readonly expiresAt?: Date;
  /**
   * The networks an API or app token may be used from; absent for a token usable from anywhere.
   * `verify` already refused the caller unless its address is inside one of them.
   */
  readonly allowedCidrs?: readonly string[];
  /**
   * A user token's RFC 8176 methods, as rz-auth signed them in the JWT: `pwd`, `otp`, `hwk`,
   * `swk`, `user`, `mfa` (`['pwd']` for a token from before rz-auth wrote them). Absent for API
   * and app tokens.
   */
  readonly amr?: readonly string[];
  /** A user token's last password, second-factor or step-up authentication (`auth_time`). Absent for API and app tokens. */
  readonly authTime?: Date;
}

/**
 * True when `caller` holds `scope`. `*` means every scope for a user token (JWT) only: rz-auth
 * gives it to no API or app token, so on one it is no wildcard, only a name it cannot hold.
 */
export const holds = (caller: Caller, scope: string): boolean =>
  caller.scopes.includes(scope) || (caller.tokenType === 'user' && caller.scopes.includes('*'));

/** rz-auth's scope names (its catalogue's rule): safe inside the challenge's quoted `scope`. */
const SCOPE_NAME = /^[a-z][a-z0-9_-]{0,31}(:[a-z][a-z0-9_-]{0,31}){1,2}$/;

/** Throws a TypeError for a scope name rz-auth cannot issue: a typo would otherwise refuse every caller. */
export function checkScopeNames(scopes: readonly string[]): void {
  const bad = scopes.find((scope) => typeof scope !== 'string' || !SCOPE_NAME.test(scope));
  if (bad !== undefined) throw new TypeError(`@rz-auth/verify: ${JSON.stringify(bad)} is not a scope name`);
}
