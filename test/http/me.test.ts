import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, json, registerApp, signup, type TestUser } from '../helpers/api.js';

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
      auth: { type: 'user', token_id: expect.any(String), scopes: ['*'], expires_at: new Date(Math.floor(clock.now() / 1000) * 1000 + 3600_000).toISOString() },
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
});
