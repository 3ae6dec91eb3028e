import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { ENROLL_AUDIENCE } from '../../src/auth/jwt.js';
import { bearer, createApiToken, expectProblem, json, login, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { mfaEnv, mfaToken, verify } from '../helpers/mfa.js';
import { createService } from '../helpers/platform.js';

const DAY = 24 * 3600_000;

/** The routes an enrolment token may call (contract §12.7). */
const ENROLMENT = (method: string, path: string) => (method === 'GET' && path === '/api/me') || (method === 'POST' && path === '/api/auth/logout') || path.startsWith('/api/me/mfa');

/**
 * Contract §12.7: with MFA_REQUIRED, a user without a second factor works during the grace period
 * (GET /api/me says until when), then logs in to a token with the enrolment audience, which opens
 * only GET /api/me, logout and the enrolment routes; API tokens keep working.
 */
describe('MFA_REQUIRED', () => {
  let t: TestApp;
  const clock = new TestClock(Date.now());
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { ...mfaEnv(), MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '14' } });
  });
  afterAll(() => t.close());

  const me = async (jwt: string) => (await json(t, 'GET', '/api/me', undefined, jwt)).json() as { mfa?: { required_by: string }; auth: { token_id: string } };

  /** A user past the grace period, logged in: the enrolment token, and an API token made during the grace. */
  async function pastGrace(): Promise<{ user: TestUser; jwt: string; apiToken: string }> {
    const user = await signup(t);
    const apiToken = (await createApiToken(t, user.jwt)).token;
    clock.advance(14 * DAY);
    return { user, jwt: await login(t, user.email, PASSWORD), apiToken };
  }

  it('during the grace: GET /api/me shows mfa.required_by (signup + MFA_GRACE_DAYS), every route works, the token has the platform audience', async () => {
    const user = await signup(t);
    expect((await me(user.jwt)).mfa).toEqual({ required_by: new Date(clock.now() + 14 * DAY).toISOString() });
    expect(decodeJwt(user.jwt).aud).toBe(t.config.jwt.audience);
    expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).statusCode).toBe(201);
    clock.advance(14 * DAY - 1000);
    const jwt = await login(t, user.email, PASSWORD);
    expect(decodeJwt(jwt).aud).toBe(t.config.jwt.audience);
    expect((await json(t, 'GET', '/api/auth/sessions', undefined, jwt)).statusCode).toBe(200);
  });

  it('past the grace: the login gives an rz-auth:enroll token; every route but GET /api/me, logout and /api/me/mfa answers 403 mfa_enrollment_required', async () => {
    const { user, jwt } = await pastGrace();
    expect(decodeJwt(jwt).aud).toBe(ENROLL_AUDIENCE);
    expect(await me(jwt)).toMatchObject({ mfa: { required_by: expect.any(String) } });
    type Op = { security?: unknown[]; responses?: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }> };
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Op>> };
    const guarded = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => JSON.stringify(op.security ?? []).includes('userToken'))
        .map(([method, op]) => [method.toUpperCase(), path, op] as const),
    );
    const documented = (op: Op) => op.responses?.['403']?.content?.['application/problem+json']?.examples?.mfa_enrollment_required !== undefined;
    expect(documented(doc.paths['/api/me']?.get ?? {})).toBe(false);
    expect(guarded.length).toBeGreaterThan(20);
    const other = await signup(t);
    const tokenId = (await createApiToken(t, other.jwt)).id;
    for (const [method, path, op] of guarded) {
      if (ENROLMENT(method, path) || path === '/api/events') continue;
      expect(documented(op), `${method} ${path} documents mfa_enrollment_required`).toBe(true);
      const url = path.replace(/\{\w+\}/g, tokenId);
      const res = await t.inject({ method: method as 'GET', url, headers: { ...bearer(jwt), ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) }, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: '{}' }) });
      expect([res.statusCode, res.json().code], `${method} ${path}`).toEqual([403, 'mfa_enrollment_required']);
      expect(res.headers['content-type'], `${method} ${path}`).toMatch(/^application\/problem\+json/);
    }
    const refused = expectProblem(await json(t, 'POST', '/api/tokens', { name: 'ci' }, jwt), 403, 'mfa_enrollment_required');
    expect(refused).toMatchObject({ type: '/problems/mfa-enrollment-required', status: 403 });
    // The refused requests did nothing: the one token is the API token made during the grace.
    expect((await t.services.audit.list({ userId: user.id, type: 'token.created', limit: 5 })).length).toBe(1);
  });

  it('an API token made during the grace keeps working; the enrolment token is inactive at introspection', async () => {
    const { jwt, apiToken } = await pastGrace();
    expect((await json(t, 'GET', '/api/me', undefined, apiToken)).statusCode).toBe(200);
    const service = await createService(t);
    const asked = await json(t, 'POST', '/api/introspect', { token: jwt }, service.token);
    expect(asked.json()).toEqual({ active: false });
    expect((await json(t, 'POST', '/api/introspect', { token: apiToken }, service.token)).json()).toMatchObject({ active: true });
  });

  it('the enrolment token enrols a factor; the next login takes two steps and gives a full token; logout works', async () => {
    const { user, jwt } = await pastGrace();
    const started = await json(t, 'POST', '/api/me/mfa/totp', undefined, jwt);
    expect(started.statusCode, started.body).toBe(201);
    const { factor_id: id, secret } = started.json() as { factor_id: string; secret: string };
    expect((await json(t, 'POST', `/api/me/mfa/totp/${id}/confirm`, { code: totpCodeAt(secret, clock.now()) }, jwt)).statusCode).toBe(200);
    expect((await json(t, 'GET', '/api/me/mfa', undefined, jwt)).json()).toMatchObject({ required_by: null });
    // The token it enrolled with stays an enrolment token until the next login.
    expectProblem(await json(t, 'GET', '/api/auth/sessions', undefined, jwt), 403, 'mfa_enrollment_required');
    expect((await me(jwt)).mfa).toBeUndefined();
    clock.advance(30_000);
    const full = await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(secret, clock.now()));
    expect(full.statusCode, full.body).toBe(200);
    const token = (full.json() as { token: string }).token;
    expect(decodeJwt(token).aud).toBe(t.config.jwt.audience);
    expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, token)).statusCode).toBe(201);
    expect((await json(t, 'POST', '/api/auth/logout', undefined, jwt)).statusCode).toBe(204);
    expect((await json(t, 'GET', '/api/me', undefined, jwt)).statusCode).toBe(401);
  });

  it('MFA_GRACE_DAYS=0: the token of the signup itself is for enrolment only', async () => {
    const strict = await startTestApp({ clock, env: { ...mfaEnv(), MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '0' } });
    try {
      const user = await signup(strict);
      expect(decodeJwt(user.jwt).aud).toBe(ENROLL_AUDIENCE);
      expectProblem(await json(strict, 'POST', '/api/tokens', { name: 'ci' }, user.jwt), 403, 'mfa_enrollment_required');
      expect((await json(strict, 'GET', '/api/me/mfa', undefined, user.jwt)).statusCode).toBe(200);
      expect(decodeJwt(await login(strict, user.email, PASSWORD)).aud).toBe(ENROLL_AUDIENCE);
    } finally {
      await strict.close();
    }
  });

  it('without MFA_REQUIRED, GET /api/me has no mfa member and the token has the platform audience', async () => {
    const open = await startTestApp({ env: mfaEnv() });
    try {
      const user = await signup(open);
      expect(Object.keys((await json(open, 'GET', '/api/me', undefined, user.jwt)).json())).not.toContain('mfa');
      expect(decodeJwt(user.jwt).aud).toBe(open.config.jwt.audience);
    } finally {
      await open.close();
    }
  });
});
