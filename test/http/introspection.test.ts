import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectInsufficientScope, expectInvalidToken, expectProblem, expectUnauthorized, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';
import type { TestClock } from '../helpers/clock.js';
import { createService, introspect, type PlatformApp, startPlatformApp } from '../helpers/platform.js';

/** Contract §7, POST /api/introspect (RFC 7662). */
describe('POST /api/introspect', () => {
  let platform: PlatformApp;
  let t: TestApp;
  let clock: TestClock;
  let user: TestUser;
  let service: { id: string; token: string };
  const seconds = () => Math.floor(clock.now() / 1000);
  beforeAll(async () => {
    platform = await startPlatformApp();
    ({ t, clock, user, service } = platform);
  });
  afterAll(() => platform.close());

  const answer = async (token: string, as: 'form' | 'json' = 'form') => {
    const res = await introspect(t, service.token, token, as);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.json() as Record<string, unknown>;
  };
  const me = (token: string) => json(t, 'GET', '/api/me', undefined, token);

  it('a user token: active, with its user, session id, "*" scope and lifetime', async () => {
    const session = (await me(user.jwt)).json().auth.token_id as string;
    expect(await answer(user.jwt)).toEqual({
      active: true,
      token_type: 'user',
      sub: user.id,
      username: user.username,
      scope: '*',
      jti: session,
      iat: seconds(),
      exp: seconds() + 3600,
      iss: 'rz-auth',
      // Contract §12.4: how the user authenticated (a password login at signup).
      amr: ['pwd'],
      auth_time: seconds(),
    });
  });

  it('an API token: active with its scopes, built-in and platform ones; exp only when it expires', async () => {
    const expiring = await createApiToken(t, user.jwt, { scopes: ['games:publish', 'apps:read'], expires_at: new Date(clock.now() + 86_400_000).toISOString() });
    expect(await answer(expiring.token, 'json')).toEqual({
      active: true,
      token_type: 'api_token',
      sub: user.id,
      username: user.username,
      scope: 'apps:read games:publish',
      jti: expiring.id,
      iat: seconds(),
      exp: seconds() + 86_400,
      iss: 'rz-auth',
    });
    const forever = await createApiToken(t, user.jwt);
    const body = await answer(forever.token);
    expect(body).not.toHaveProperty('exp');
    expect(body).toMatchObject({ active: true, scope: '', jti: forever.id });
  });

  it('a token limited to networks: active, with its allowed_cidrs for the service to apply; a token without a list has none', async () => {
    const limited = await createApiToken(t, user.jwt, { scopes: ['games:publish'], allowed_cidrs: ['192.0.2.0/24', '2001:db8::/32'] });
    expect(await answer(limited.token)).toEqual({
      active: true,
      token_type: 'api_token',
      sub: user.id,
      username: user.username,
      scope: 'games:publish',
      jti: limited.id,
      iat: seconds(),
      iss: 'rz-auth',
      allowed_cidrs: ['192.0.2.0/24', '2001:db8::/32'],
    });
    expect(await answer(user.jwt)).not.toHaveProperty('allowed_cidrs');
    expect(await answer((await createApiToken(t, user.jwt)).token)).not.toHaveProperty('allowed_cidrs');
  });

  it('an app token: active with its app as client_id and its platform scopes', async () => {
    const app = await registerApp(t, user.jwt, { scopes: ['scores:write'] });
    expect(await answer(app.token)).toEqual({
      active: true,
      token_type: 'app_token',
      sub: user.id,
      username: user.username,
      scope: 'scores:write',
      jti: app.token_id,
      iat: seconds(),
      iss: 'rz-auth',
      client_id: app.id,
    });
  });

  it('accepts a form or JSON body, with or without token_type_hint, and answers the same', async () => {
    const { token } = await createApiToken(t, user.jwt);
    const form = await t.inject({
      method: 'POST',
      url: '/api/introspect',
      headers: { ...bearer(service.token), 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      payload: `token_type_hint=access_token&token=${token}`,
    });
    const asJson = await t.inject({ method: 'POST', url: '/api/introspect', headers: bearer(service.token), payload: { token, token_type_hint: 'api_token' } });
    expect(form.statusCode).toBe(200);
    expect(form.body).toBe(asJson.body);
    expect(form.json()).toMatchObject({ active: true });
  });

  it('is active exactly when GET /api/me accepts the token, at that moment', async () => {
    const fresh = await signup(t);
    const api = await createApiToken(t, fresh.jwt, { expires_at: new Date(clock.now() + 60_000).toISOString() });
    const revoked = await createApiToken(t, fresh.jwt);
    const app = await registerApp(t, fresh.jwt);
    const candidates = [fresh.jwt, api.token, revoked.token, app.token, service.token, 'rz_nope', ''];
    const agree = async () => {
      for (const token of candidates) {
        const accepted = token !== '' && (await me(token)).statusCode === 200;
        expect((await answer(token)).active, token.slice(0, 8)).toBe(accepted);
      }
    };
    await agree();
    expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, fresh.jwt)).statusCode).toBe(204);
    await agree();
    clock.advance(61_000);
    await agree();
    expect((await json(t, 'DELETE', `/api/apps/${app.id}`, undefined, fresh.jwt)).statusCode).toBe(204);
    await agree();
    expect((await json(t, 'POST', '/api/auth/logout', undefined, fresh.jwt)).statusCode).toBe(204);
    await agree();
    expect(await answer(fresh.jwt)).toEqual({ active: false });
  });

  it('a deleted user\'s tokens, and user tokens signed by a key dropped at once, are inactive', async () => {
    const doomed = await signup(t);
    const { token } = await createApiToken(t, doomed.jwt);
    expect((await answer(token)).active).toBe(true);
    expect(await t.services.users.delete(doomed.id)).toBe(true);
    expect(await answer(token)).toEqual({ active: false });
    expect(await answer(doomed.jwt)).toEqual({ active: false });

    const other = await signup(t);
    expect((await answer(other.jwt)).active).toBe(true);
    await t.services.keys.rotate({ immediate: true });
    expect(await answer(other.jwt)).toEqual({ active: false });
    user = { ...user, jwt: await login(t, user.email) };
  });

  it('a service credential is no token to introspect: inactive, its own included', async () => {
    const other = await createService(t, 'catalogue');
    expect(await answer(other.token)).toEqual({ active: false });
    expect(await answer(service.token)).toEqual({ active: false });
  });

  describe('who may call it', () => {
    it('no token: 401; another token type: 403 naming the service scope', async () => {
      expectUnauthorized(await t.inject({ method: 'POST', url: '/api/introspect', payload: { token: 'x' } }));
      const { token } = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read', 'games:publish'] });
      const app = await registerApp(t, user.jwt, { scopes: ['scores:write'] });
      for (const caller of [user.jwt, token, app.token]) {
        expectInsufficientScope(await t.inject({ method: 'POST', url: '/api/introspect', headers: bearer(caller), payload: { token } }), 'service');
      }
    });

    it('a revoked service credential: 401 invalid_token, from the next request on', async () => {
      const doomed = await createService(t, 'retired service');
      expect((await introspect(t, doomed.token, user.jwt)).statusCode).toBe(200);
      expect(await t.services.serviceCredentials.revoke(doomed.id)).toBe(true);
      expectInvalidToken(await introspect(t, doomed.token, user.jwt));
      expect(await t.services.serviceCredentials.revoke(doomed.id)).toBe(false);
    });
  });

  describe('bodies', () => {
    const send = (payload: string, contentType = 'application/x-www-form-urlencoded') =>
      t.inject({ method: 'POST', url: '/api/introspect', headers: { ...bearer(service.token), 'content-type': contentType }, payload });
    const fieldsOf = (body: Record<string, unknown>) => (body.errors as Array<{ field: string; message: string }>).map((e) => e.field);

    it.each([
      ['a field twice', 'token=a&token=b', 'body'],
      ['an unknown field', 'token=a&client_secret=b', 'client_secret'],
      ['no token', 'token_type_hint=access_token', 'token'],
      ['an unknown hint', 'token=a&token_type_hint=id_token', 'token_type_hint'],
      ['a field without a value', 'token', 'body'],
      ['a broken escape', 'token=%E0%A4', 'body'],
      ['an escape that is not UTF-8', 'token=%FF', 'body'],
      ['a prototype key', '__proto__=x&token=a', 'body'],
      ['nothing', '', 'body'],
      ['a JSON body sent as a form', '{"token":"a"}', 'body'],
    ])('a form with %s (%j) is 400 naming %s', async (_what, payload, field) => {
      const body = expectProblem(await send(payload), 400, 'validation_failed');
      expect(fieldsOf(body)).toContain(field);
    });

    it('a form that is not UTF-8 is 400; one over 16 KiB is 413; another type is 415', async () => {
      const latin1 = await t.inject({
        method: 'POST',
        url: '/api/introspect',
        headers: { ...bearer(service.token), 'content-type': 'application/x-www-form-urlencoded' },
        payload: Buffer.from([0x74, 0x6f, 0x6b, 0x65, 0x6e, 0x3d, 0xe9]),
      });
      expectProblem(latin1, 400, 'validation_failed');
      expectProblem(await send(`token=${'a'.repeat(17_000)}`), 413, 'payload_too_large');
      // The detail named JSON only, on the one route that takes forms.
      expect(expectProblem(await send('token=a', 'text/plain'), 415, 'unsupported_media_type').detail).toMatch(/form.*JSON/);
      expectProblem(await send('token=a', 'application/x-www-form-urlencoded; charset=latin1'), 415, 'unsupported_media_type');
      expectProblem(await send('token=a', 'multipart/form-data; boundary=x'), 415, 'unsupported_media_type');
      // Parameters besides a UTF-8 charset are allowed, as for JSON.
      expect((await send('token=a', 'application/x-www-form-urlencoded;charset=utf-8;foo=bar')).json()).toEqual({ active: false });
    });

    it('JSON bodies follow the JSON rules: unknown fields and a missing token are 400', async () => {
      expect(fieldsOf(expectProblem(await send('{"token":"a","extra":1}', 'application/json'), 400, 'validation_failed'))).toContain('extra');
      expect(fieldsOf(expectProblem(await send('{}', 'application/json'), 400, 'validation_failed'))).toContain('token');
      expect(fieldsOf(expectProblem(await send('{"token":"a","token":"b"}', 'application/json'), 400, 'validation_failed'))).toContain('body');
    });

    it('a token longer than 8192 characters was a 400, though anything malformed is inactive: any length the body holds is inactive', async () => {
      for (const junk of ['a'.repeat(8193), 'a'.repeat(15_000), `eyJ${'a'.repeat(14_000)}.eyJ.x`, `rz_${'A'.repeat(15_000)}`]) {
        expect(await answer(junk)).toEqual({ active: false });
        expect(await answer(junk, 'json')).toEqual({ active: false });
      }
    });

    it.each(['/api/tokens', '/api/apps', '/api/auth/login', '/api/auth/signup', '/api/auth/logout', `/api/apps/00000000-0000-4000-8000-000000000000/tokens`])(
      'every other route still answers a form with 415: %s',
      async (url) => {
        const res = await t.inject({ method: 'POST', url, headers: { ...bearer(user.jwt), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' });
        expectProblem(res, 415, 'unsupported_media_type');
      },
    );
  });
});

describe('POST /api/introspect rate limit', () => {
  it('has its own policy per service credential, with the RateLimit fields, and 429 past it', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_SERVICE: '3/60', RATE_LIMIT_CREDENTIAL: '1/60' } });
    try {
      const user = await signup(t);
      const first = await createService(t, 'first');
      const second = await createService(t, 'second');
      for (let i = 0; i < 3; i++) {
        const res = await introspect(t, first.token, user.jwt);
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe('"service";q=3;w=60');
        expect(res.headers.ratelimit).toMatch(new RegExp(`^"service";r=${2 - i};t=\\d+$`));
      }
      const limited = expectProblem(await introspect(t, first.token, user.jwt), 429, 'rate_limited');
      expect(limited.code).toBe('rate_limited');
      expect((await introspect(t, second.token, user.jwt)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('defaults to 60000 a minute', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on' } });
    try {
      const service = await createService(t);
      expect((await introspect(t, service.token, 'x')).headers['ratelimit-policy']).toBe('"service";q=60000;w=60');
    } finally {
      await t.close();
    }
  });
});
