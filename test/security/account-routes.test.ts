import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectInsufficientScope, expectProblem, json, PASSWORD, registerApp, signup, type TestUser } from '../helpers/api.js';

/**
 * The account routes check the user's password, so they are a second door to guess it through:
 * each attempt is a login attempt for the limits (per address and per the account's email), and a
 * stolen API or app token opens neither door. Hostile bodies get a 4xx, never a 5xx.
 */

const NEW_PASSWORD = 'a brand new and rather long passphrase';
const WRONG = 'definitely not the password';

function expectRateLimited(res: LightMyRequestResponse): void {
  expectProblem(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, String(res.headers['retry-after'])).toBe(true);
}

const send = (t: TestApp, method: 'POST' | 'DELETE', url: string, body: unknown, token: string, from = '198.51.100.1') =>
  t.inject({ method, url, remoteAddress: from, headers: { 'content-type': 'application/json', ...bearer(token) }, payload: JSON.stringify(body) });

const changePassword = (t: TestApp, user: TestUser, current: string, from?: string) =>
  send(t, 'POST', '/api/auth/password', { current_password: current, new_password: NEW_PASSWORD }, user.jwt, from);
const deleteMe = (t: TestApp, user: TestUser, password: string, from?: string) => send(t, 'DELETE', '/api/me', { password }, user.jwt, from);
const login = (t: TestApp, email: string, password: string, from = '198.51.100.1') =>
  t.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: from, headers: { 'content-type': 'application/json' }, payload: { email, password } });

describe('password guessing through the account routes', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("counts against the account's login-email limit, shared with login: then 429 with Retry-After, even for the right password", async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_LOGIN_EMAIL: '4/600', RATE_LIMIT_LOGIN_ADDRESS: '100/60' } });
    const user = await signup(t);
    // Each from its own address: only the per-email counter can add them up.
    expectProblem(await changePassword(t, user, WRONG, '198.51.100.1'), 401, 'invalid_credentials');
    expectProblem(await deleteMe(t, user, WRONG, '198.51.100.2'), 401, 'invalid_credentials');
    const third = await login(t, user.email, WRONG, '198.51.100.3');
    expectProblem(third, 401, 'invalid_credentials');
    expect(third.headers.ratelimit).toMatch(/"login-email";r=1;/);
    const fourth = await changePassword(t, user, WRONG, '198.51.100.4');
    expectProblem(fourth, 401, 'invalid_credentials');
    expect(fourth.headers['ratelimit-policy']).toContain('"login-email";q=4;w=600');
    expectRateLimited(await changePassword(t, user, PASSWORD, '198.51.100.5'));
    expectRateLimited(await deleteMe(t, user, PASSWORD, '198.51.100.6'));
    expectRateLimited(await login(t, user.email, PASSWORD, '198.51.100.7'));
    // Refused before the password was looked at: nothing changed, nothing was deleted.
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
    const other = await signup(t);
    expectProblem(await changePassword(t, other, WRONG, '198.51.100.8'), 401, 'invalid_credentials');
  });

  it('counts against the login-address limit, shared with login', async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_LOGIN_ADDRESS: '3/60', RATE_LIMIT_LOGIN_EMAIL: '100/600' } });
    const user = await signup(t);
    expectProblem(await login(t, 'someone@example.com', WRONG), 401, 'invalid_credentials');
    expectProblem(await changePassword(t, user, WRONG), 401, 'invalid_credentials');
    expectProblem(await deleteMe(t, user, WRONG), 401, 'invalid_credentials');
    expectRateLimited(await changePassword(t, user, PASSWORD));
    expectRateLimited(await deleteMe(t, user, PASSWORD));
    expectRateLimited(await login(t, user.email, PASSWORD));
    // Another address is its own bucket.
    expect((await changePassword(t, user, PASSWORD, '203.0.113.50')).statusCode).toBe(204);
  });

  it('API and app tokens are refused (403) before any password is checked or counted', async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_LOGIN_EMAIL: '1/600', RATE_LIMIT_LOGIN_ADDRESS: '1/60' } });
    const user = await signup(t);
    const apiToken = (await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] })).token;
    const appToken = (await registerApp(t, user.jwt)).token;
    for (let i = 0; i < 5; i++) {
      for (const token of [apiToken, appToken]) {
        expectInsufficientScope(await send(t, 'POST', '/api/auth/password', { current_password: WRONG, new_password: NEW_PASSWORD }, token), '*');
        expectInsufficientScope(await send(t, 'DELETE', '/api/me', { password: WRONG }, token), '*');
      }
    }
    // Nothing was counted: the one allowed attempt is still there, and it is the owner's.
    expect((await changePassword(t, user, PASSWORD)).statusCode).toBe(204);
  });
});

describe('hostile bodies on the account routes', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());
  afterEach(async () => {
    // Still signed in, password unchanged: nothing hostile did anything.
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
  });

  const raw = (method: 'POST' | 'DELETE', url: string, payload: string, contentType = 'application/json') =>
    t.inject({ method, url, payload, headers: { 'content-type': contentType, ...bearer(user.jwt) } });

  const ROUTES: Array<['POST' | 'DELETE', string, (password: unknown) => unknown]> = [
    ['POST', '/api/auth/password', (p) => ({ current_password: p, new_password: NEW_PASSWORD })],
    ['DELETE', '/api/me', (p) => ({ password: p })],
  ];

  const HOSTILE: Array<[string, unknown, number]> = [
    ['a password over the schema bound', 'x'.repeat(4097), 400],
    ['a password over 1024 bytes', 'é'.repeat(600), 401],
    ['NUL and control characters', `\u0000${PASSWORD}\u0007`, 401],
    ['a lone surrogate', '\ud800 long enough text', 400],
    ['null', null, 400],
    ['an array', [PASSWORD], 400],
    ['an object', { value: PASSWORD }, 400],
    ['a number', 123456789012345, 400],
    ['an empty string', '', 401],
  ];

  for (const [method, url, body] of ROUTES) {
    it.each(HOSTILE)(`${method} ${url}: %s, a 4xx problem, never 5xx`, async (_what, password, status) => {
      const res = await raw(method, url, JSON.stringify(body(password)));
      expectProblem(res, status, status === 400 ? 'validation_failed' : 'invalid_credentials');
    });

    it.each([
      ['malformed JSON', '{"password":', 'application/json', 400],
      ['a form', 'password=x', 'application/x-www-form-urlencoded', 415],
      ['text/plain', '{"password":"x"}', 'text/plain', 415],
      ['a body over 16 KiB', JSON.stringify(body('y'.repeat(17_000))), 'application/json', 413],
      ['deep nesting', `{"password":${'['.repeat(5000)}${']'.repeat(5000)}}`, 'application/json', 400],
    ])(`${method} ${url}: %s → 4xx`, async (_what, payload, type, status) => {
      const res = await raw(method, url, payload, type);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });
  }

  it.each(['x'.repeat(8000), '%00', '..%2F..%2Fetc', `${'0'.repeat(36)}`, "1' or '1'='1"])('DELETE /api/auth/sessions/%s → 404', async (id) => {
    expectProblem(await json(t, 'DELETE', `/api/auth/sessions/${id}`, undefined, user.jwt), 404, 'not_found');
  });
});
