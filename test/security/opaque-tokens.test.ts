import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectInvalidToken, expectProblem, flip, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';

/**
 * Security family 4, API (`rz_`) and app (`rza_`) tokens: every token that is not a live token
 * of ours is 401 invalid_token, with one body whatever the reason.
 */

interface Live {
  readonly api: string;
  readonly app: string;
}

const swapCase = (s: string) => [...s].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');

/** Strings derived from live tokens that must not authenticate. */
const VARIANTS: Array<[string, (live: Live) => string]> = [
  ['wrong prefix rx_', ({ api }) => `rx_${api.slice(3)}`],
  ['upper-case prefix RZ_', ({ api }) => `RZ_${api.slice(3)}`],
  ['"-" instead of "_"', ({ api }) => `rz-${api.slice(3)}`],
  ["another vendor's prefix", ({ api }) => `ghp_${api.slice(3)}`],
  ['no prefix', ({ api }) => api.slice(3)],
  ['prefix doubled', ({ api }) => `rz_${api}`],
  ['one body character changed', ({ api }) => flip(api, 10)],
  ['one checksum character changed', ({ api }) => flip(api, api.length - 1)],
  ['app token: one body character changed', ({ app }) => flip(app, 12)],
  ['app token: one checksum character changed', ({ app }) => flip(app, app.length - 3)],
  ['checksum of the other token', ({ api, app }) => api.slice(0, -6) + app.slice(-6)],
  ['rz_ relabelled rza_', ({ api }) => `rza_${api.slice(3)}`],
  ['rza_ relabelled rz_', ({ app }) => `rz_${app.slice(4)}`],
  ['upper-cased', ({ api }) => api.toUpperCase()],
  ['lower-cased', ({ api }) => api.toLowerCase()],
  ['body case-swapped', ({ api }) => api.slice(0, 3) + swapCase(api.slice(3))],
  ['app token upper-cased', ({ app }) => app.toUpperCase()],
  ['app token body case-swapped', ({ app }) => app.slice(0, 4) + swapCase(app.slice(4))],
  ['last character dropped', ({ api }) => api.slice(0, -1)],
  ['checksum dropped', ({ api }) => api.slice(0, -6)],
  ['cut in half', ({ api }) => api.slice(0, 26)],
  ['prefix only', () => 'rz_'],
  ['one character added', ({ api }) => `${api}A`],
  ['the token twice', ({ api }) => api + api],
  ['a space inside', ({ api }) => `${api.slice(0, 20)} ${api.slice(20)}`],
  ['a tab inside', ({ app }) => `${app.slice(0, 20)}\t${app.slice(20)}`],
  ['a newline appended', ({ api }) => `${api}\n`],
  ['CR LF appended', ({ app }) => `${app}\r\n`],
  ['a URL-encoded newline appended', ({ api }) => `${api}%0A`],
  ['an escaped newline appended', ({ api }) => `${api}\\n`],
  ['a no-break space appended', ({ api }) => `${api}\u00a0`],
  ['a zero-width space appended', ({ api }) => `${api}\u200b`],
  ['a full-width underscore', ({ api }) => api.replace('_', '\uff3f')],
  ['right checksum, never issued (rz_)', () => generateToken('api')],
  ['right checksum, never issued (rza_)', () => generateToken('app')],
];

describe('API and app tokens', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  let live: Live;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
    live = { api: (await createApiToken(t, user.jwt)).token, app: (await registerApp(t, user.jwt)).token };
  });
  afterAll(() => t.close());

  const me = (token: string) => t.inject({ method: 'GET', url: '/api/me', headers: bearer(token) });
  const expectWorks = async (token: string) => {
    const res = await me(token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { auth: { type: string; token_id: string; scopes: string[]; expires_at: string | null }; app?: { id: string } };
  };
  const del = (url: string) => json(t, 'DELETE', url, undefined, user.jwt);

  /** Tokens that worked a moment ago and were then killed, one per way of dying. */
  const dead = {
    async revokedApiToken() {
      const { id, token } = await createApiToken(t, user.jwt);
      await expectWorks(token);
      expect((await del(`/api/tokens/${id}`)).statusCode).toBe(204);
      return token;
    },
    async revokedAppToken() {
      const { token, token_id } = await registerApp(t, user.jwt);
      await expectWorks(token);
      expect((await del(`/api/tokens/${token_id}`)).statusCode).toBe(204);
      return token;
    },
    async expiredApiToken() {
      const { token } = await createApiToken(t, user.jwt, { expires_at: new Date(clock.now() + 60_000).toISOString() });
      await expectWorks(token);
      clock.advance(60_000);
      return token;
    },
    async tokensOfADeletedApp() {
      const app = await registerApp(t, user.jwt);
      const second = await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt);
      expect(second.statusCode).toBe(201);
      const tokens = [app.token, (second.json() as { token: string }).token];
      for (const token of tokens) await expectWorks(token);
      expect((await del(`/api/apps/${app.id}`)).statusCode).toBe(204);
      return tokens;
    },
    async tokensOfADeletedUser() {
      const doomed = await signup(t);
      const tokens = [doomed.jwt, (await createApiToken(t, doomed.jwt)).token, (await registerApp(t, doomed.jwt)).token];
      for (const token of tokens) await expectWorks(token);
      expect(await t.services.users.delete(doomed.id)).toBe(true);
      return tokens;
    },
  };

  it('the live tokens used below work', async () => {
    expect((await expectWorks(live.api)).auth.type).toBe('api_token');
    expect((await expectWorks(live.app)).auth.type).toBe('app_token');
  });

  it.each(VARIANTS)('%s: 401 invalid_token', async (_what, variant) => {
    const token = variant(live);
    expect(token).not.toBe(live.api);
    expectInvalidToken(await me(token));
  });

  it('an API token is rejected on the very next request after its revocation, and stays revoked', async () => {
    const token = await dead.revokedApiToken();
    expectInvalidToken(await me(token));
    expectInvalidToken(await me(token));
  });

  it('revoking one app token leaves the app and its other tokens working', async () => {
    const app = await registerApp(t, user.jwt);
    const rotated = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).json() as { token: string };
    await expectWorks(app.token);
    expect((await del(`/api/tokens/${app.token_id}`)).statusCode).toBe(204);
    expectInvalidToken(await me(app.token));
    expect((await expectWorks(rotated.token)).app?.id).toBe(app.id);
    expectProblem(await del(`/api/tokens/${app.token_id}`), 404, 'not_found');
  });

  it('an expired API token is rejected from its expires_at on, not a millisecond earlier', async () => {
    const expiresAt = clock.now() + 60_000;
    const { token } = await createApiToken(t, user.jwt, { expires_at: new Date(expiresAt).toISOString() });
    clock.advance(expiresAt - 1 - clock.now());
    await expectWorks(token);
    clock.advance(1);
    expectInvalidToken(await me(token));
    expect(((await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json() as { tokens: Array<{ expires_at: string }> }).tokens).not.toContainEqual(
      expect.objectContaining({ expires_at: new Date(expiresAt).toISOString() }),
    );
  });

  it('every token of a deleted app is rejected', async () => {
    for (const token of await dead.tokensOfADeletedApp()) expectInvalidToken(await me(token));
  });

  it('every token of a deleted user is rejected (JWT, API and app token)', async () => {
    for (const token of await dead.tokensOfADeletedUser()) expectInvalidToken(await me(token));
  });

  it('a revoked app token and an expired API token are rejected', async () => {
    expectInvalidToken(await me(await dead.revokedAppToken()));
    expectInvalidToken(await me(await dead.expiredApiToken()));
  });

  describe('a token whose creation returned 201 works at once', () => {
    it('API token, with the scopes and expiry it was created with', async () => {
      const expires = new Date(clock.now() + 3_600_000).toISOString();
      const created = await createApiToken(t, user.jwt, { scopes: ['tokens:read', 'apps:read'], expires_at: expires });
      const { auth } = await expectWorks(created.token);
      expect(auth).toEqual({ type: 'api_token', token_id: created.id, scopes: ['apps:read', 'tokens:read'], expires_at: expires });
      expect((await json(t, 'GET', '/api/tokens', undefined, created.token)).statusCode).toBe(200);
    });

    it('app token from registration and from POST /api/apps/{id}/tokens', async () => {
      const app = await registerApp(t, user.jwt);
      expect(await expectWorks(app.token)).toMatchObject({ auth: { type: 'app_token', token_id: app.token_id }, app: { id: app.id } });
      const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).json() as { token: string; token_id: string };
      expect(await expectWorks(issued.token)).toMatchObject({ auth: { token_id: issued.token_id }, app: { id: app.id } });
    });
  });

  it('every rejection has the same body apart from request_id, and the same headers', async () => {
    const tokens = [
      ...VARIANTS.map(([, variant]) => variant(live)),
      await dead.revokedApiToken(),
      await dead.revokedAppToken(),
      await dead.expiredApiToken(),
      ...(await dead.tokensOfADeletedApp()),
      ...(await dead.tokensOfADeletedUser()),
    ];
    const shapes = (await Promise.all(tokens.map(me))).map((res: LightMyRequestResponse) => {
      expectInvalidToken(res);
      // RateLimit counts down by design; everything else must match.
      const headers = Object.entries(res.headers).filter(([name]) => !['date', 'x-request-id', 'ratelimit'].includes(name));
      return JSON.stringify({ headers, body: res.body.replace(String(res.headers['x-request-id']), '<id>') });
    });
    expect(new Set(shapes)).toEqual(new Set([shapes[0]]));
  });
});
