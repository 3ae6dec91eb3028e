import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import type { InjectOptions } from 'fastify';
import { bearer, createApiToken, expectInvalidToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

describe('GET /api/me', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t, { username: 'ada_l' });
  });
  afterAll(() => t.close());

  it('user token: full context, session id, scopes ["*"], JWT expiry', async () => {
    const res = await json(t, 'GET', '/api/me', undefined, user.jwt);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: user.id,
      username: 'ada_l',
      email: user.email,
      email_verified: false,
      auth: {
        type: 'user',
        token_id: expect.any(String),
        scopes: ['*'],
        expires_at: new Date(Math.floor(clock.now() / 1000) * 1000 + 3600_000).toISOString(),
        // Contract §12.4: a password login (signup), at signup's second.
        amr: ['pwd'],
        auth_time: new Date(Math.floor(clock.now() / 1000) * 1000).toISOString(),
      },
    });
    expect(body).not.toHaveProperty('app');
  });

  it('API token: its id, scopes and expiry', async () => {
    const expires = new Date(clock.now() + 7 * 86_400_000).toISOString();
    const created = await createApiToken(t, user.jwt, { scopes: ['apps:read'], expires_at: expires });
    const body = (await json(t, 'GET', '/api/me', undefined, created.token)).json();
    expect(body).toEqual({
      id: user.id,
      username: 'ada_l',
      email: user.email,
      auth: { type: 'api_token', token_id: created.id, scopes: ['apps:read'], expires_at: expires },
    });
  });

  it('app token: the app, and no email (it may ship inside a published game)', async () => {
    const app = await registerApp(t, user.jwt, { name: 'Invaders' });
    const res = await json(t, 'GET', '/api/me', undefined, app.token);
    const body = res.json();
    expect(body).toEqual({
      id: user.id,
      username: 'ada_l',
      auth: { type: 'app_token', token_id: app.token_id, scopes: [], expires_at: null },
      app: { id: app.id, name: 'Invaders' },
    });
    expect(res.body).not.toContain(user.email);
  });

  it('answers as the contract says: no token, a malformed or unknown one, a revoked one', async () => {
    const created = await createApiToken(t, user.jwt);
    await t.inject({ method: 'GET', url: '/api/me', headers: bearer(created.token) });
    expect((await json(t, 'DELETE', `/api/tokens/${created.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const { token } = await createApiToken(t, user.jwt);
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer\t${token}` }, bearer(created.token)]) {
      const res = await t.inject({ method: 'GET', url: '/api/me', headers });
      if ('authorization' in headers && headers.authorization !== `Bearer\t${token}`) expectInvalidToken(res);
      else expectProblem(res, 401, 'unauthorized');
    }
  });

  it('GET /api/me with a body is refused as any route refuses one; an empty body is no body', async () => {
    const { token } = await createApiToken(t, user.jwt);
    const request: InjectOptions = { method: 'GET', url: '/api/me', headers: bearer(token) };
    const cases: Array<[InjectOptions, number, string]> = [
      [{ ...request, headers: { ...bearer(token), 'content-type': 'text/plain' }, payload: 'ab' }, 415, 'unsupported_media_type'],
      [{ ...request, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: '{"user_id":1}' }, 400, 'validation_failed'],
      [{ ...request, headers: { ...bearer(token), 'content-type': 'application/json', 'content-length': '99999' } }, 413, 'payload_too_large'],
      [{ ...request, headers: { ...bearer(token), 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, payload: '{}' }, 400, 'validation_failed'],
    ];
    for (const [options, status, code] of cases) {
      const res = await t.inject(options);
      expectProblem(res, status, code);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    const empty = await t.inject({ ...request, headers: { ...bearer(token), 'content-type': 'text/plain', 'content-length': '0' }, payload: '' });
    expect(empty.statusCode).toBe(200);
  });

  it('a request over the credential limit is answered 429 with its RateLimit fields', async () => {
    const limited = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '2/60' } });
    try {
      const { token } = await createApiToken(limited, (await signup(limited)).jwt);
      const me = () => limited.inject({ method: 'GET', url: '/api/me', headers: bearer(token) });
      expect((await me()).statusCode).toBe(200);
      expect((await me()).statusCode).toBe(200);
      const refused = await me();
      expectProblem(refused, 429, 'rate_limited');
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.headers['ratelimit-policy']).toBe('"credential";q=2;w=60');
      expect(refused.headers.ratelimit).toMatch(/^"credential";r=0;t=\d+$/);
    } finally {
      await limited.close();
    }
  });
});
