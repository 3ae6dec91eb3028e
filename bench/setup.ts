/** What the scenarios authenticate with, created through the public API like any client would. */
export interface Credentials {
  readonly email: string;
  readonly password: string;
  /** A user token (JWT) from POST /api/auth/login. */
  readonly jwt: string;
  /** An API token (`rz_…`) with no scopes: GET /api/me only. */
  readonly apiToken: string;
  /** An app token (`rza_…`) from POST /api/apps. */
  readonly appToken: string;
}

const EMAIL = 'bench@example.com';
const PASSWORD = 'a benchmark password, long enough';

async function call(baseUrl: string, method: 'GET' | 'POST', path: string, options: { token?: string; body?: unknown } = {}): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`setup: ${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new Error(`setup: response has no string "${name}": ${JSON.stringify(body)}`);
  return value;
}

/**
 * Signs up one user, creates an API token and an app (with its app token), logs in for a JWT, and
 * checks that GET /api/me accepts each credential as the type it is.
 */
export async function createCredentials(baseUrl: string): Promise<Credentials> {
  const signup = await call(baseUrl, 'POST', '/api/auth/signup', { body: { email: EMAIL, username: 'bench', password: PASSWORD } });
  const signupJwt = field(signup, 'token');
  const apiToken = field(await call(baseUrl, 'POST', '/api/tokens', { token: signupJwt, body: { name: 'bench' } }), 'token');
  const appToken = field(await call(baseUrl, 'POST', '/api/apps', { token: signupJwt, body: { name: 'Bench app' } }), 'token');
  const jwt = field(await call(baseUrl, 'POST', '/api/auth/login', { body: { email: EMAIL, password: PASSWORD } }), 'token');
  const credentials = { email: EMAIL, password: PASSWORD, jwt, apiToken, appToken };
  for (const [token, type] of [[jwt, 'user'], [apiToken, 'api_token'], [appToken, 'app_token']] as const) {
    const me = await call(baseUrl, 'GET', '/api/me', { token });
    const auth = me.auth as { type?: unknown } | undefined;
    if (auth?.type !== type) throw new Error(`setup: GET /api/me with a ${type} answered ${JSON.stringify(me)}`);
  }
  return credentials;
}
