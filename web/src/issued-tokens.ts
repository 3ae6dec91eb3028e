/**
 * App tokens issued from this page in this tab. rz-auth never lists an app's tokens (it keeps only
 * their digests), so the page can offer to revoke only the ones it has seen. Ids and hints only,
 * never a value; kept per user in sessionStorage, dropped at logout.
 */
export interface IssuedToken {
  readonly tokenId: string;
  readonly appId: string;
  readonly createdAt: string;
  /** `rza_` and the last four characters, as the API shows for API tokens. */
  readonly hint: string;
  /** The scopes it was issued with (absent in lists kept by an older page). */
  readonly scopes?: readonly string[];
}

const key = (userId: string) => `rz-auth.issued-app-tokens.${userId}`;

function read(userId: string): IssuedToken[] {
  try {
    const saved: unknown = JSON.parse(sessionStorage.getItem(key(userId)) ?? '[]');
    return Array.isArray(saved) ? (saved as IssuedToken[]).filter((t) => typeof t.tokenId === 'string' && typeof t.appId === 'string') : [];
  } catch {
    return [];
  }
}

function write(userId: string, tokens: readonly IssuedToken[]): void {
  try {
    sessionStorage.setItem(key(userId), JSON.stringify(tokens));
  } catch {
    // Storage full or disabled: the list is a convenience, the API is the source of truth.
  }
}

export const hintOf = (value: string): string => `${value.slice(0, value.indexOf('_') + 1)}${value.slice(-4)}`;

export const issuedFor = (userId: string, appId: string): IssuedToken[] => read(userId).filter((t) => t.appId === appId);

export function rememberIssued(userId: string, token: IssuedToken): void {
  write(userId, [...read(userId), token]);
}

export function forgetIssued(userId: string, match: (token: IssuedToken) => boolean): void {
  write(userId, read(userId).filter((t) => !match(t)));
}

export function forgetAllIssued(userId: string): void {
  try {
    sessionStorage.removeItem(key(userId));
  } catch {
    // Nothing stored.
  }
}
