import { derive } from '@rz-auth/token';
import { totpCodeAt } from '../src/account/mfa/totp.js';
import { request, runCli } from '../test/helpers/server-process.js';

/** What the scenarios authenticate with, created through the public API like any client would. */
export interface Credentials {
  readonly email: string;
  readonly password: string;
  /** A user token (JWT) from POST /api/auth/login: `amr` ["pwd"]. */
  readonly jwt: string;
  /** A user token of another user, from a login with password and TOTP: `amr` ["pwd","otp","mfa"]. */
  readonly mfaJwt: string;
  /** An API token (`rz_…`) with no scopes: GET /api/me only. */
  readonly apiToken: string;
  /** An API token with a network allow-list that admits the load generator. */
  readonly allowListedToken: string;
  /** An app token (`rza_…`) from POST /api/apps. */
  readonly appToken: string;
  /** A service credential (`rzs_…`) from `rz-auth services create`, for introspection. */
  readonly serviceToken: string;
  /** The device code of a device login left pending, for polling POST /oauth/token. */
  readonly deviceCode: string;
  /** A derivable API token (`rz_…`, no scopes) and a 5-caveat child of it (contract §14.10). */
  readonly derivableToken: string;
  readonly derivedToken: string;
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

/** A service credential made by the CLI, as an operator makes one, on the server's store (`env`). */
async function createServiceToken(env: Record<string, string>): Promise<string> {
  const created = await runCli(['services', 'create', 'bench'], env);
  const token = created.code === 0 ? (JSON.parse(created.stdout) as { token?: unknown }).token : undefined;
  if (typeof token !== 'string') throw new Error(`setup: rz-auth services create exited ${created.code}: ${created.stderr}`);
  return token;
}

/**
 * A second user with an authenticator app, enrolled through the API as the page does, then logged
 * in with password and code: a JWT like `jwt`, whose `amr` and `auth_time` tell of a second factor.
 * Not the first user: its factor would put POST /api/tokens (tokens-create) behind step-up.
 */
async function mfaLogin(baseUrl: string): Promise<string> {
  const email = 'bench-mfa@example.com';
  const signupJwt = await tokenFrom(baseUrl, 'POST', '/api/auth/signup', { body: { email, username: 'bench_mfa', password: PASSWORD } });
  const started = await request(baseUrl, 'POST', '/api/me/mfa/totp', { token: signupJwt });
  const { factor_id: factorId, secret } = (started.body ?? {}) as { factor_id?: string; secret?: string };
  if (started.status !== 201 || factorId === undefined || secret === undefined) throw new Error(`setup: POST /api/me/mfa/totp answered ${started.status}: ${JSON.stringify(started.body)}`);
  const confirmed = await request(baseUrl, 'POST', `/api/me/mfa/totp/${factorId}/confirm`, { token: signupJwt, body: { code: totpCodeAt(secret, Date.now()) } });
  if (confirmed.status !== 200) throw new Error(`setup: confirming the factor answered ${confirmed.status}: ${JSON.stringify(confirmed.body)}`);
  const pending = await request(baseUrl, 'POST', '/api/auth/login', { body: { email, password: PASSWORD } });
  const mfaToken = (pending.body as { mfa_token?: unknown } | null)?.mfa_token;
  if (typeof mfaToken !== 'string') throw new Error(`setup: the login answered ${pending.status}: ${JSON.stringify(pending.body)}`);
  // The next step's code: the confirmation took this one, and rz-auth accepts T+1.
  const jwt = await tokenFrom(baseUrl, 'POST', '/api/auth/mfa/verify', { body: { mfa_token: mfaToken, method: 'totp', code: totpCodeAt(secret, Date.now() + 30_000) } });
  const me = await request(baseUrl, 'GET', '/api/me', { token: jwt });
  const amr = (me.body as { auth?: { amr?: unknown } } | null)?.auth?.amr;
  if (!Array.isArray(amr) || !amr.includes('otp')) throw new Error(`setup: GET /api/me with the TOTP login's JWT answered ${me.status}: ${JSON.stringify(me.body)}`);
  return jwt;
}

/**
 * Signs up one user, creates an API token and an app (with its app token), logs in for a JWT, has
 * the CLI create a service credential with the server's environment (`env`), and checks that GET
 * /api/me accepts each user credential as the type it is and that introspection finds the API token
 * active: a load that only measured 401s or inactive answers would be fast and meaningless.
 */
export async function createCredentials(baseUrl: string, env: Record<string, string>): Promise<Credentials> {
  const signupJwt = await tokenFrom(baseUrl, 'POST', '/api/auth/signup', { body: { email: EMAIL, username: 'bench', password: PASSWORD } });
  const apiToken = await tokenFrom(baseUrl, 'POST', '/api/tokens', { token: signupJwt, body: { name: 'bench' } });
  // The load generator runs on loopback: this token's allow-list admits it, so each request pays the check.
  const allowListedToken = await tokenFrom(baseUrl, 'POST', '/api/tokens', {
    token: signupJwt,
    body: { name: 'bench, allow-listed', allowed_cidrs: ['10.0.0.0/8', '192.168.0.0/16', '127.0.0.0/8', '::1/128'] },
  });
  const appToken = await tokenFrom(baseUrl, 'POST', '/api/apps', { token: signupJwt, body: { name: 'Bench app' } });
  const derivableToken = await tokenFrom(baseUrl, 'POST', '/api/tokens', { token: signupJwt, body: { name: 'bench, derivable', derivable: true } });
  // Five caveats (iat, exp, scopes, aud, label), the typical child of contract §14.4; a week, so it outlives any run.
  const derivedToken = derive(derivableToken, { ttl: '7d', scopes: [], aud: ['rz-auth', 'bench'], label: 'bench run' });
  const jwt = await tokenFrom(baseUrl, 'POST', '/api/auth/login', { body: { email: EMAIL, password: PASSWORD } });
  const mfaJwt = await mfaLogin(baseUrl);
  for (const [token, type] of [[jwt, 'user'], [mfaJwt, 'user'], [apiToken, 'api_token'], [allowListedToken, 'api_token'], [appToken, 'app_token'], [derivedToken, 'api_token']] as const) {
    const me = await request(baseUrl, 'GET', '/api/me', { token });
    if ((me.body as { auth?: { type?: unknown } } | null)?.auth?.type !== type) {
      throw new Error(`setup: GET /api/me with a ${type} answered ${me.status}: ${JSON.stringify(me.body)}`);
    }
  }
  const serviceToken = await createServiceToken(env);
  const introspected = await fetch(`${baseUrl}/api/introspect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${serviceToken}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: apiToken }).toString(),
  });
  const answer = (await introspected.json()) as { active?: unknown };
  if (answer.active !== true) throw new Error(`setup: POST /api/introspect answered ${introspected.status}: ${JSON.stringify(answer)}`);
  const device = await fetch(`${baseUrl}/oauth/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=rz-cli' });
  const { device_code: deviceCode } = (await device.json()) as { device_code?: unknown };
  if (typeof deviceCode !== 'string') throw new Error(`setup: POST /oauth/device_authorization answered ${device.status}`);
  return { email: EMAIL, password: PASSWORD, jwt, mfaJwt, apiToken, allowListedToken, appToken, serviceToken, deviceCode, derivableToken, derivedToken };
}
