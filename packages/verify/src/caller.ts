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
}

/** True when `caller` holds `scope`: a user token (`*`) holds every scope. */
export const holds = (caller: Caller, scope: string): boolean => caller.scopes.includes(scope) || caller.scopes.includes('*');
