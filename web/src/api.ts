import type { Answer, operations, paths, Problem, RequestBody } from '../../types/api.js';

/**
 * The rz-auth public API as the page uses it. Same origin, JSON only; the user token travels in the
 * Authorization header and nowhere else (never in a URL, so never in logs or history). Every path,
 * body and answer is typed from the OpenAPI document (types/openapi.d.ts, generated at build time),
 * so the page cannot drift from the API without failing its typecheck.
 */

export type SessionGrant = Answer<'logIn'>;
export type User = SessionGrant['user'];
/** An active app token as GET /api/apps/{id}/tokens lists it: never its value. */
export type AppToken = Answer<'listAppTokens'>['tokens'][number];
export type ApiToken = Answer<'listApiTokens'>['tokens'][number];
export type CreatedApiToken = Answer<'createApiToken', 201>;
/** One token with what it has done: GET /api/tokens/{id}. */
export type TokenDetail = Answer<'getToken'>;
/** The new token of a rotation, of the same kind as the one it replaces. */
export type RotatedToken = Answer<'rotateToken', 201>;
export type App = Answer<'listApps'>['apps'][number];
export type RegisteredApp = Answer<'registerApp', 201>;
export type IssuedAppToken = Answer<'issueAppToken', 201>;
/** A session of the signed-in user: one per login or signup still active. */
export type UserSession = Answer<'listSessions'>['sessions'][number];
/** A scope of the catalogue: rz-auth's own (`builtin`) or the platform's. */
export type ScopeInfo = Answer<'listScopes'>['scopes'][number];
/** The token types a scope may be given to. */
export type ScopeTokenType = ScopeInfo['token_types'][number];

/** A field a validation_failed problem names, and what is wrong with it. */
export type FieldError = Readonly<NonNullable<Problem['errors']>[number]>;

/** What a login answered `mfa_required` carries for its second step (contract §12.4): kept in memory only. */
export interface MfaChallenge {
  readonly token: string;
  readonly methods: readonly string[];
  /** Seconds the token lives. */
  readonly expiresIn: number;
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
    /** Only on a login answered `mfa_required`. */
    readonly mfa: MfaChallenge | null = null,
  ) {
    super(detail);
  }
}

/** A problem's members by the document's names, each still to be checked: a proxy may answer instead. */
type ProblemBody = { [Name in keyof Problem]?: unknown };

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
    body.code === 'mfa_required' ? challengeOf(body) : null,
  );
}

function challengeOf(body: ProblemBody): MfaChallenge | null {
  if (typeof body.mfa_token !== 'string') return null;
  const methods = Array.isArray(body.methods) ? body.methods.filter((m): m is string => typeof m === 'string') : [];
  return { token: body.mfa_token, methods, expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 300 };
}

type Method = 'get' | 'post' | 'patch' | 'delete';
/** The document's operation for a path and method (never when it has none). */
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
/** The paths that have an operation for `method`. */
type PathOf<M extends Method> = { [P in keyof paths]: [Operation<P, M>] extends [never] ? never : P }[keyof paths];
/** What a successful answer holds: its JSON, or nothing for a 204. */
type Success<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 204 ? undefined : S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof R]
  : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type PathParams<O> = O extends { parameters: { path: infer Params } } ? Params : never;
type QueryParams<O> = O extends { parameters: { query?: infer Query } } ? Query : never;

/** The rest of a request: a value for each of the path's `{parameters}`, the query and the body, each where the operation has one. */
type Init<O> = ([PathParams<O>] extends [never] ? { readonly path?: never } : { readonly path: PathParams<O> }) & {
  readonly query?: QueryParams<O>;
  readonly body?: Body<O>;
};

/** `/api/tokens/{id}` with its `{id}`, each value URL-encoded. */
const fill = (template: string, params: Readonly<Record<string, string>> = {}): string =>
  template.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));

function urlOf(template: string, path: object | undefined, query: object | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return `${fill(template, path as Record<string, string> | undefined)}${text === '' ? '' : `?${text}`}`;
}

/**
 * One request to the API: JSON in and out, the token in the Authorization header only. Untyped:
 * {@link call} types it from the document.
 */
async function send(method: string, url: string, token: string | null, body: unknown): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(url, {
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
  if (response.status === 204) return undefined;
  return (await response.json()) as unknown;
}

/** One API call, typed by its path and method from the document: the modules beside this one build their calls on it. */
export async function call<M extends Method, P extends PathOf<M>>(method: M, path: P, token: string | null, init: Init<Operation<P, M>>): Promise<Success<Operation<P, M>>> {
  return (await send(method.toUpperCase(), urlOf(path, init.path, init.query ?? undefined), token, init.body)) as Success<Operation<P, M>>;
}

type Input<Op extends keyof operations> = RequestBody<Op>;

/** The largest page a list hands out, and how many pages a list is read to at most (docs/lists.md). */
const PAGE_LIMIT = '200';
const MAX_PAGES = 25;

/**
 * Every item of a list, page after page along `next_cursor`. What one user owns is capped (500 API
 * tokens by default), so this is a few requests; the bound on pages keeps a list that never ends
 * (an uncapped one, or a misbehaving proxy) from keeping the page busy.
 */
export async function everyPage<Page extends { readonly next_cursor: string | null }, Item>(
  read: (query: { limit: string; cursor?: string }) => Promise<Page>,
  items: (page: Page) => readonly Item[],
): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < MAX_PAGES; pages += 1) {
    const page: Page = await read(cursor === null ? { limit: PAGE_LIMIT } : { limit: PAGE_LIMIT, cursor });
    all.push(...items(page));
    cursor = page.next_cursor;
    if (cursor === null) break;
  }
  return all;
}

export const signup = (body: Input<'signUp'>) => call('post', '/api/auth/signup', null, { body });
export const login = (body: Input<'logIn'>) => call('post', '/api/auth/login', null, { body });
export const logout = (jwt: string) => call('post', '/api/auth/logout', jwt, {});

export const listTokens = async (jwt: string) => ({ tokens: await everyPage((query) => call('get', '/api/tokens', jwt, { query }), (page) => page.tokens) });
export const createToken = (jwt: string, body: Input<'createApiToken'>) => call('post', '/api/tokens', jwt, { body });
export const getToken = (jwt: string, id: string) => call('get', '/api/tokens/{id}', jwt, { path: { id } });
/** Renames or narrows a token: scopes and networks may only shrink. */
export const updateToken = (jwt: string, id: string, body: Input<'updateToken'>) => call('patch', '/api/tokens/{id}', jwt, { path: { id }, body });
export const rotateToken = (jwt: string, id: string, graceSeconds: number) =>
  call('post', '/api/tokens/{id}/rotate', jwt, { path: { id }, body: { grace_seconds: graceSeconds } });
/** Revokes an API token or an app token of one of the caller's apps. */
export const revokeToken = (jwt: string, id: string) => call('delete', '/api/tokens/{id}', jwt, { path: { id } });

export const listApps = async (jwt: string) => ({ apps: await everyPage((query) => call('get', '/api/apps', jwt, { query }), (page) => page.apps) });
export const registerApp = (jwt: string, body: Input<'registerApp'>) => call('post', '/api/apps', jwt, { body });
export const deleteApp = (jwt: string, id: string) => call('delete', '/api/apps/{id}', jwt, { path: { id } });
export const listAppTokens = async (jwt: string, id: string) => ({
  tokens: await everyPage((query) => call('get', '/api/apps/{id}/tokens', jwt, { path: { id }, query }), (page) => page.tokens),
});
/** Without scopes, no body at all: a token that can call GET /api/me and read its own app. */
export const issueAppToken = (jwt: string, id: string, scopes: readonly string[] = []) =>
  call('post', '/api/apps/{id}/tokens', jwt, { path: { id }, ...(scopes.length > 0 ? { body: { scopes: [...scopes] } } : {}) });

export const changePassword = (jwt: string, body: Input<'updatePassword'>) => call('post', '/api/auth/password', jwt, { body });
export const listSessions = async (jwt: string) => ({ sessions: await everyPage((query) => call('get', '/api/auth/sessions', jwt, { query }), (page) => page.sessions) });
export const revokeSession = (jwt: string, id: string) => call('delete', '/api/auth/sessions/{id}', jwt, { path: { id } });
export const revokeOtherSessions = (jwt: string) => call('delete', '/api/auth/sessions', jwt, {});
/** Deletes the account with everything it owns; the password confirms it. */
export const deleteAccount = (jwt: string, password: string) => call('delete', '/api/me', jwt, { body: { password } });

/** Every scope a token can carry, with what it grants: needs no token. */
export const listScopes = () => call('get', '/api/scopes', null, {});
