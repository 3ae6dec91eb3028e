import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken, tokenDigest } from '../../src/lib/token-format.js';
import type { TestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectInsufficientScope, flip, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';
import type { TestClock } from '../helpers/clock.js';
import { createService, introspect, type PlatformApp, startPlatformApp } from '../helpers/platform.js';

/**
 * Security family 11, the service-to-service routes: a service credential works there and nowhere
 * else, nothing else works there, and introspection answers every unusable token with the same bytes.
 */
const APP = '00000000-0000-4000-8000-000000000001';
const TOKEN = '00000000-0000-4000-8000-000000000002';

/** Every protected route but the service routes, with the scope its 403 names. */
const PROTECTED: Array<[InjectOptions['method'], string, string]> = [
  ['POST', '/api/auth/logout', '*'],
  ['GET', '/api/me', '*'],
  ['POST', '/api/tokens', '*'],
  ['GET', '/api/tokens', 'tokens:read'],
  ['DELETE', `/api/tokens/${TOKEN}`, '*'],
  ['POST', '/api/apps', 'apps:write'],
  ['GET', '/api/apps', 'apps:read'],
  ['GET', `/api/apps/${APP}`, 'apps:read'],
  ['DELETE', `/api/apps/${APP}`, 'apps:write'],
  ['POST', `/api/apps/${APP}/tokens`, 'apps:write'],
];

describe('service credentials and the service routes', () => {
  let platform: PlatformApp;
  let t: TestApp;
  let clock: TestClock;
  let user: TestUser;
  let service: { id: string; token: string };
  beforeAll(async () => {
    platform = await startPlatformApp();
    ({ t, clock, user, service } = platform);
  });
  afterAll(() => platform.close());

  it.each(PROTECTED)('a service credential on %s %s is 403 insufficient_scope, and does nothing', async (method, url, scope) => {
    const body = method === 'POST' && !url.endsWith('logout') ? { name: 'x' } : undefined;
    const res = await t.inject({ method, url, headers: bearer(service.token), ...(body ? { payload: body } : {}) });
    expectInsufficientScope(res, scope);
  });

  it('a service credential creates nothing, on any route', async () => {
    const count = async () => (await t.services.database.db.selectFrom('tokens').select('id').execute()).length;
    const before = await count();
    await t.inject({ method: 'POST', url: '/api/tokens', headers: bearer(service.token), payload: { name: 'x' } });
    await t.inject({ method: 'POST', url: '/api/apps', headers: bearer(service.token), payload: { name: 'x' } });
    expect(await count()).toBe(before);
  });

  it.each([
    ['POST', '/api/introspect'],
    ['GET', '/api/events'],
  ] as const)('every other token type on %s %s is 403 naming the service scope', async (method, url) => {
    const everything = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read', 'games:publish', 'catalogue:admin:read'] });
    const app = await registerApp(t, user.jwt, { scopes: ['scores:write', 'games:publish'] });
    for (const token of [user.jwt, everything.token, app.token]) {
      const res = await t.inject({ method, url, headers: bearer(token), ...(method === 'POST' ? { payload: { token: everything.token } } : {}) });
      expectInsufficientScope(res, 'service');
    }
  });

  it('a service credential is stored only as a digest, and no log line holds it or a token it introspected', async () => {
    const created = await createService(t, 'digest check');
    const { token } = await createApiToken(t, user.jwt);
    expect((await introspect(t, created.token, token)).statusCode).toBe(200);
    const dump = JSON.stringify(await t.services.database.db.selectFrom('service_credentials').selectAll().execute());
    expect(dump).not.toContain(created.token);
    expect(dump).toContain(tokenDigest(created.token));
    const logs = (await t.settledLogs()).join('');
    expect(logs).toContain('"auth":"service"');
    expect(logs).not.toContain(created.token);
    expect(logs).not.toContain(token);
  });

  describe('introspection is no oracle', () => {
    /** Everything that varies between two answers whatever they say: the request id, the date. */
    const comparable = (res: LightMyRequestResponse) => {
      const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => name !== 'date' && name !== 'x-request-id'));
      return { status: res.statusCode, headers, body: res.body };
    };

    it('answers every token that is not usable right now with the same status, headers and bytes', async () => {
      const victim = await signup(t);
      const live = await createApiToken(t, victim.jwt);
      const revoked = await createApiToken(t, victim.jwt);
      const expiring = await createApiToken(t, victim.jwt, { expires_at: new Date(clock.now() + 1000).toISOString() });
      const app = await registerApp(t, victim.jwt);
      const loggedOut = await login(t, victim.email);
      const doomed = await signup(t);
      const doomedToken = await createApiToken(t, doomed.jwt);
      const otherService = await createService(t, 'other');
      expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, victim.jwt)).statusCode).toBe(204);
      expect((await json(t, 'DELETE', `/api/apps/${app.id}`, undefined, victim.jwt)).statusCode).toBe(204);
      expect((await json(t, 'POST', '/api/auth/logout', undefined, loggedOut)).statusCode).toBe(204);
      expect(await t.services.users.delete(doomed.id)).toBe(true);
      clock.advance(2000);

      const unusable: Array<[string, string]> = [
        ['revoked', revoked.token],
        ['expired', expiring.token],
        ['of a deleted app', app.token],
        ['logged out', loggedOut],
        ['of a deleted user (API token)', doomedToken.token],
        ['of a deleted user (user token)', doomed.jwt],
        ['unknown but well-formed', generateToken('api')],
        ['unknown app token', generateToken('app')],
        ['bad checksum', flip(live.token, -1)],
        ['relabelled rz_ to rza_', `rza_${live.token.slice(3)}`],
        ['relabelled rz_ to rzs_', `rzs_${live.token.slice(3)}`],
        ['a service credential', otherService.token],
        ['a JWT with a flipped signature', flip(victim.jwt, -5)],
        ['a JWT with alg none', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${victim.jwt.split('.')[1]}.`],
        ['empty', ''],
        ['garbage', 'hello world'],
        ['Bearer-prefixed', `Bearer ${live.token}`],
        ['with a trailing newline', `${live.token}\n`],
        ['long junk', 'x'.repeat(5000)],
      ];
      const answers = await Promise.all(unusable.map(async ([what, token]) => [what, await introspect(t, service.token, token)] as const));
      const [first] = answers;
      expect(first?.[1].body).toBe('{"active":false}');
      for (const [what, res] of answers) expect(comparable(res), what).toEqual(comparable(first?.[1] as LightMyRequestResponse));
      // The positive control: the live token is active through the very same request.
      expect((await introspect(t, service.token, live.token)).json()).toMatchObject({ active: true, jti: live.id });
    });
  });
});
