import { request } from '../test/helpers/server-process.js';

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

/** The `token` of a 2xx JSON answer; anything else stops the run before a load measures it. */
async function tokenFrom(baseUrl: string, method: 'GET' | 'POST', path: string, options: { token?: string; body?: unknown }): Promise<string> {
  const res = await request(baseUrl, method, path, options);
  const token = (res.body as { token?: unknown } | null)?.token;
  if (res.status >= 300 || typeof token !== 'string') throw new Error(`setup: ${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return token;
}

/**
 * Signs up one user, creates an API token and an app (with its app token), logs in for a JWT, and
 * checks that GET /api/me accepts each credential as the type it is: a load that only measured
 * 401s would be fast and meaningless.
 */
export async function createCredentials(baseUrl: string): Promise<Credentials> {
  const signupJwt = await tokenFrom(baseUrl, 'POST', '/api/auth/signup', { body: { email: EMAIL, username: 'bench', password: PASSWORD } });
  const apiToken = await tokenFrom(baseUrl, 'POST', '/api/tokens', { token: signupJwt, body: { name: 'bench' } });
  const appToken = await tokenFrom(baseUrl, 'POST', '/api/apps', { token: signupJwt, body: { name: 'Bench app' } });
  const jwt = await tokenFrom(baseUrl, 'POST', '/api/auth/login', { body: { email: EMAIL, password: PASSWORD } });
  for (const [token, type] of [[jwt, 'user'], [apiToken, 'api_token'], [appToken, 'app_token']] as const) {
    const me = await request(baseUrl, 'GET', '/api/me', { token });
    if ((me.body as { auth?: { type?: unknown } } | null)?.auth?.type !== type) {
      throw new Error(`setup: GET /api/me with a ${type} answered ${me.status}: ${JSON.stringify(me.body)}`);
    }
  }
  return { email: EMAIL, password: PASSWORD, jwt, apiToken, appToken };
}
