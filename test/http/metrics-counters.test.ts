import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, PASSWORD, registerApp, signup, type TestUser } from '../helpers/api.js';
import { registryOf, samples, total } from '../helpers/metrics.js';
import { createService, introspect } from '../helpers/platform.js';

/** Metrics on (the listener is not started in-process: the registry is read directly). */
const METRICS = { METRICS_ADDR: '127.0.0.1:9464' };

type Labels = Record<string, string>;
/** A request (after what it needs: a token, a credential), and each series it must move by exactly one. */
type Row = [name: string, run: (t: TestApp, user: TestUser) => Promise<unknown>, moves: Array<[metric: string, labels: Labels]>];

const me = { route: '/api/me', method: 'GET' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const rows: Row[] = [
  [
    'GET /api/me with an API token',
    async (t, u) => t.inject({ method: 'GET', url: '/api/me', headers: bearer((await createApiToken(t, u.jwt)).token) }),
    [
      ['rz_http_requests_total', { ...me, status: '200' }],
      ['rz_http_request_duration_seconds', me],
      ['rz_auth_decisions_total', { token_type: 'api_token', outcome: 'ok' }],
    ],
  ],
  ['GET /api/me with a user token', (t, u) => json(t, 'GET', '/api/me', undefined, u.jwt), [['rz_auth_decisions_total', { token_type: 'user', outcome: 'ok' }]]],
  [
    'GET /api/me without a token',
    (t) => t.inject({ method: 'GET', url: '/api/me' }),
    [
      ['rz_http_requests_total', { ...me, status: '401' }],
      ['rz_auth_decisions_total', { token_type: 'none', outcome: 'invalid_token' }],
    ],
  ],
  ['GET /api/me with an unknown token', (t) => t.inject({ method: 'GET', url: '/api/me', headers: bearer(generateToken('api')) }), [['rz_auth_decisions_total', { token_type: 'none', outcome: 'invalid_token' }]]],
  [
    'an API token without the scope',
    async (t, u) => t.inject({ method: 'GET', url: '/api/tokens', headers: bearer((await createApiToken(t, u.jwt)).token) }),
    [
      ['rz_http_requests_total', { route: '/api/tokens', method: 'GET', status: '403' }],
      ['rz_auth_decisions_total', { token_type: 'api_token', outcome: 'insufficient_scope' }],
    ],
  ],
  [
    'an API token from outside its networks',
    async (t, u) => t.inject({ method: 'GET', url: '/api/me', headers: bearer((await createApiToken(t, u.jwt, { allowed_cidrs: ['203.0.113.0/24'] })).token) }),
    [['rz_auth_decisions_total', { token_type: 'api_token', outcome: 'network_refused' }]],
  ],
  [
    'an unknown path',
    (t) => t.inject({ method: 'GET', url: '/api/nothing/here' }),
    [['rz_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }]],
  ],
  [
    'a login',
    (t, u) => json(t, 'POST', '/api/auth/login', { email: u.email, password: PASSWORD }),
    [
      ['rz_logins_total', { outcome: 'success', method: 'password' }],
      ['rz_password_hash_duration_seconds', { op: 'verify' }],
    ],
  ],
  ['a login with a wrong password', (t, u) => json(t, 'POST', '/api/auth/login', { email: u.email, password: 'not it at all' }), [['rz_logins_total', { outcome: 'invalid_credentials', method: 'password' }]]],
  ['POST /api/tokens', (t, u) => createApiToken(t, u.jwt), [['rz_tokens_created_total', { token_type: 'api_token', origin: 'api' }]]],
  ['POST /api/apps', (t, u) => json(t, 'POST', '/api/apps', { name: 'Counted' }, u.jwt), [['rz_tokens_created_total', { token_type: 'app_token', origin: 'api' }]]],
  [
    'a rotation without grace',
    async (t, u) => json(t, 'POST', `/api/tokens/${(await createApiToken(t, u.jwt)).id}/rotate`, {}, u.jwt),
    [
      ['rz_tokens_created_total', { token_type: 'api_token', origin: 'rotation' }],
      ['rz_tokens_revoked_total', { token_type: 'api_token', reason: 'rotation' }],
    ],
  ],
  ['DELETE /api/tokens/:id', async (t, u) => json(t, 'DELETE', `/api/tokens/${(await createApiToken(t, u.jwt)).id}`, undefined, u.jwt), [['rz_tokens_revoked_total', { token_type: 'api_token', reason: 'user' }]]],
  ['a leak report', async (t, u) => json(t, 'POST', '/api/tokens/leaked', { tokens: [(await createApiToken(t, u.jwt)).token] }), [['rz_tokens_revoked_total', { token_type: 'api_token', reason: 'leak' }]]],
  [
    'DELETE /api/apps/:id: its active token ends with it',
    async (t, u) => {
      const app = await registerApp(t, u.jwt);
      return json(t, 'DELETE', `/api/apps/${app.id}`, undefined, u.jwt);
    },
    [['rz_tokens_revoked_total', { token_type: 'app_token', reason: 'app_deleted' }]],
  ],
  [
    'DELETE /api/me: its API token and its app token end with the account',
    async (t) => {
      const gone = await signup(t);
      await createApiToken(t, gone.jwt);
      await registerApp(t, gone.jwt);
      return t.inject({ method: 'DELETE', url: '/api/me', headers: { ...bearer(gone.jwt), 'content-type': 'application/json' }, payload: { password: PASSWORD } });
    },
    [
      ['rz_tokens_revoked_total', { token_type: 'api_token', reason: 'user_deleted' }],
      ['rz_tokens_revoked_total', { token_type: 'app_token', reason: 'user_deleted' }],
    ],
  ],
  [
    'an introspection of an active token',
    async (t, u) => introspect(t, (await createService(t, 'scoreboard')).token, u.jwt),
    [
      ['rz_introspections_total', { service: 'scoreboard', active: 'true' }],
      ['rz_introspection_duration_seconds', {}],
      ['rz_auth_decisions_total', { token_type: 'service', outcome: 'ok' }],
    ],
  ],
  ['an introspection of junk', async (t) => introspect(t, (await createService(t, 'billing')).token, 'junk'), [['rz_introspections_total', { service: 'billing', active: 'false' }]]],
];

/** Rows that need small rate limits: a second app, so the others are never limited. */
const limitedRows: Row[] = [
  [
    'a login past the address limit',
    async (t, u) => {
      await t.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: { email: u.email, password: PASSWORD }, remoteAddress: '198.51.100.7' });
      return t.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: { email: u.email, password: PASSWORD }, remoteAddress: '198.51.100.7' });
    },
    [
      ['rz_logins_total', { outcome: 'rate_limited', method: 'password' }],
      ['rz_ratelimit_rejections_total', { policy: 'login-address' }],
    ],
  ],
  [
    'a token past the credential limit',
    async (t, u) => {
      const { token } = await createApiToken(t, u.jwt);
      await t.inject({ method: 'GET', url: '/api/me', headers: bearer(token) });
      return t.inject({ method: 'GET', url: '/api/me', headers: bearer(token) });
    },
    [
      ['rz_auth_decisions_total', { token_type: 'api_token', outcome: 'rate_limited' }],
      ['rz_ratelimit_rejections_total', { policy: 'credential' }],
    ],
  ],
];

function suite(title: string, env: Record<string, string>, table: Row[]): void {
  describe(title, () => {
    let t: TestApp;
    let user: TestUser;
    beforeAll(async () => {
      t = await startTestApp({ env: { ...METRICS, ...env } });
      user = await signup(t);
    });
    afterAll(() => t.close());

    it.each(table)('%s', async (_name, run, moves) => {
      const registry = registryOf(t);
      const before = await samples(registry);
      await run(t, user);
      const after = await samples(registry);
      for (const [metric, labels] of moves) {
        expect(total(after, metric, labels) - total(before, metric, labels), `${metric} ${JSON.stringify(labels)}`).toBe(1);
      }
    });
  });
}

suite('each counter moves by one', { RATE_LIMITS: 'off' }, rows);
suite('each refusal by a limit counts once', { RATE_LIMITS: 'on', RATE_LIMIT_LOGIN_ADDRESS: '1/600', RATE_LIMIT_CREDENTIAL: '1/600', RATE_LIMIT_SIGNUP_ADDRESS: 'off', RATE_LIMIT_SIGNUP_EMAIL: 'off' }, limitedRows);
