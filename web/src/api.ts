/**
 * The rz-auth public API as the page uses it. Same origin, JSON only; the user token travels in the
 * Authorization header and nowhere else (never in a URL, so never in logs or history).
 */

export interface User {
  readonly id: string;
  readonly username: string;
  readonly email: string;
}

export interface SessionGrant {
  readonly token: string;
  readonly user: User;
}

/** An active app token as GET /api/apps/{id}/tokens lists it: never its value. */
export interface AppToken {
  readonly id: string;
  readonly scopes: readonly string[];
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly last_used_at: string | null;
  readonly hint: string;
}

export interface ApiToken extends AppToken {
  readonly name: string;
}

export interface CreatedApiToken {
  readonly id: string;
  readonly token: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly allowed_cidrs: readonly string[] | null;
}

/** One token with what it has done: GET /api/tokens/{id}. */
export interface TokenDetail extends ApiToken {
  readonly type: 'api_token' | 'app_token';
  readonly allowed_cidrs: readonly string[] | null;
  readonly last_used_ip: string | null;
  readonly scopes_used: readonly string[];
}

/** The new token of a rotation, of the same kind as the one it replaces. */
export interface RotatedToken extends CreatedApiToken {
  readonly type: 'api_token' | 'app_token';
  readonly replaces: string;
}

export interface App {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly created_at: string;
}

export interface RegisteredApp extends App {
  readonly token: string;
  readonly token_id: string;
}

export interface IssuedAppToken {
  readonly token: string;
  readonly token_id: string;
  readonly created_at: string;
}

/** A session of the signed-in user: one per login or signup still active. */
export interface UserSession {
  readonly id: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly ip: string | null;
  readonly user_agent: string | null;
  readonly current: boolean;
}

/** The token types a scope may be given to. */
export type ScopeTokenType = 'api_token' | 'app_token';

/** A scope of the catalogue: rz-auth's own (`builtin`) or the platform's. */
export interface ScopeInfo {
  readonly name: string;
  readonly description: string;
  readonly token_types: readonly ScopeTokenType[];
  readonly builtin: boolean;
}

export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** A failed call: an RFC 9457 problem from the server, or `network` when none arrived. */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    /** 0 when the server could not be reached. */
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly fieldErrors: readonly FieldError[],
    /** Seconds from Retry-After, when the server sent one. */
    readonly retryAfter: number | null,
    readonly requestId: string | null,
  ) {
    super(detail);
  }
}

interface ProblemBody {
  code?: unknown;
  detail?: unknown;
  errors?: unknown;
  request_id?: unknown;
}

const isFieldError = (e: unknown): e is FieldError =>
  typeof e === 'object' && e !== null && typeof (e as FieldError).field === 'string' && typeof (e as FieldError).message === 'string';

async function toApiError(response: Response): Promise<ApiError> {
  let body: ProblemBody = {};
  try {
    const parsed: unknown = await response.json();
    if (typeof parsed === 'object' && parsed !== null) body = parsed as ProblemBody;
  } catch {
    // Not JSON (a proxy's error page, say): the status alone is described to the person.
  }
  const retry = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
  return new ApiError(
    response.status,
    typeof body.code === 'string' ? body.code : 'unknown',
    typeof body.detail === 'string' ? body.detail : '',
    Array.isArray(body.errors) ? body.errors.filter(isFieldError) : [],
    Number.isFinite(retry) && retry >= 0 ? retry : null,
    typeof body.request_id === 'string' ? body.request_id : null,
  );
}

/** One API call: the modules beside this one (api-security.ts) build their calls on it. */
export async function call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, token: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      // Responses carry credentials or per-user data: never from or into a cache.
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, 'network', '', [], null, null);
  }
  if (!response.ok) throw await toApiError(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

const id = (value: string) => encodeURIComponent(value);

export const signup = (input: { email: string; username: string; password: string }) =>
  call<SessionGrant>('POST', '/api/auth/signup', null, input);
export const login = (input: { email: string; password: string }) => call<SessionGrant>('POST', '/api/auth/login', null, input);
export const logout = (jwt: string) => call<undefined>('POST', '/api/auth/logout', jwt);

export const listTokens = (jwt: string) => call<{ tokens: ApiToken[] }>('GET', '/api/tokens', jwt);
export const createToken = (jwt: string, input: { name: string; scopes: string[]; expires_at?: string; allowed_cidrs?: string[] }) =>
  call<CreatedApiToken>('POST', '/api/tokens', jwt, input);
export const getToken = (jwt: string, tokenId: string) => call<TokenDetail>('GET', `/api/tokens/${id(tokenId)}`, jwt);
/** Renames or narrows a token: scopes and networks may only shrink. */
export const updateToken = (jwt: string, tokenId: string, input: { name?: string; scopes?: string[]; allowed_cidrs?: string[] }) =>
  call<TokenDetail>('PATCH', `/api/tokens/${id(tokenId)}`, jwt, input);
export const rotateToken = (jwt: string, tokenId: string, graceSeconds: number) =>
  call<RotatedToken>('POST', `/api/tokens/${id(tokenId)}/rotate`, jwt, { grace_seconds: graceSeconds });
/** Revokes an API token or an app token of one of the caller's apps. */
export const revokeToken = (jwt: string, tokenId: string) => call<undefined>('DELETE', `/api/tokens/${id(tokenId)}`, jwt);

export const listApps = (jwt: string) => call<{ apps: App[] }>('GET', '/api/apps', jwt);
export const registerApp = (jwt: string, input: { name: string; description: string; scopes?: string[] }) => call<RegisteredApp>('POST', '/api/apps', jwt, input);
export const deleteApp = (jwt: string, appId: string) => call<undefined>('DELETE', `/api/apps/${id(appId)}`, jwt);
export const listAppTokens = (jwt: string, appId: string) => call<{ tokens: AppToken[] }>('GET', `/api/apps/${id(appId)}/tokens`, jwt);
/** Without scopes, no body at all: a token that can call GET /api/me and read its own app. */
export const issueAppToken = (jwt: string, appId: string, scopes: readonly string[] = []) =>
  call<IssuedAppToken>('POST', `/api/apps/${id(appId)}/tokens`, jwt, scopes.length > 0 ? { scopes } : undefined);

export const changePassword = (jwt: string, input: { current_password: string; new_password: string }) =>
  call<undefined>('POST', '/api/auth/password', jwt, input);
export const listSessions = (jwt: string) => call<{ sessions: UserSession[] }>('GET', '/api/auth/sessions', jwt);
export const revokeSession = (jwt: string, sessionId: string) => call<undefined>('DELETE', `/api/auth/sessions/${id(sessionId)}`, jwt);
export const revokeOtherSessions = (jwt: string) => call<undefined>('DELETE', '/api/auth/sessions', jwt);
/** Deletes the account with everything it owns; the password confirms it. */
export const deleteAccount = (jwt: string, password: string) => call<undefined>('DELETE', '/api/me', jwt, { password });

/** Every scope a token can carry, with what it grants: needs no token. */
export const listScopes = () => call<{ scopes: ScopeInfo[] }>('GET', '/api/scopes', null);
