import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { approve, DEVICE_ENV, form, poll, requestDevice } from '../helpers/device.js';

const clock = new TestClock(Date.parse('2026-12-01T10:00:00Z'));
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, env: { ...DEVICE_ENV } });
});
afterAll(() => t.close());

describe('device flow over HTTP', () => {
  it('request → lookup → approve → poll → the token works on /api/me and shows its origin', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t, { scope: 'apps:read tokens:read', device_name: 'ada-laptop' });
    expect(codes.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codes.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(codes).toMatchObject({ verification_uri: 'http://localhost:3000/device', verification_uri_complete: `http://localhost:3000/device?user_code=${codes.user_code}`, expires_in: 900, interval: 5 });

    const pending = await poll(t, codes.device_code);
    expect(pending.statusCode).toBe(400);
    expect(pending.json()).toMatchObject({ error: 'authorization_pending' });
    expect(pending.headers['cache-control']).toBe('no-store');
    expect(pending.headers.pragma).toBe('no-cache');

    const lookup = await json(t, 'POST', '/api/device/lookup', { user_code: codes.user_code.toLowerCase().replace('-', ' ') }, user.jwt);
    expect(lookup.statusCode, lookup.body).toBe(200);
    expect(lookup.json()).toMatchObject({
      user_code: codes.user_code,
      client: { id: 'rz-cli', name: 'rz CLI' },
      device_name: 'ada-laptop',
      device_name_verified: false,
      requester: { ip: '127.0.0.1' },
      same_network: true,
    });

    await approve(t, user.jwt, codes.user_code, { scopes: ['apps:read'] });
    clock.advance(5000);
    const issued = await poll(t, codes.device_code);
    expect(issued.statusCode, issued.body).toBe(200);
    expect(issued.headers['cache-control']).toBe('no-store');
    const token = issued.json() as { access_token: string; token_type: string; expires_in: number; scope: string; token_id: string };
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 90 * 86400, scope: 'apps:read' });
    expect(token.access_token).toMatch(/^rz_/);

    const me = await json(t, 'GET', '/api/me', undefined, token.access_token);
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ id: user.id });

    const detail = await json(t, 'GET', `/api/tokens/${token.token_id}`, undefined, user.jwt);
    expect(detail.json()).toMatchObject({ origin: 'device_flow', client_id: 'rz-cli', device_name: 'ada-laptop', name: 'rz CLI on ada-laptop (2026-12-01)', scopes: ['apps:read'] });

    const again = await poll(t, codes.device_code);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('POST /oauth/revoke: the token revokes itself; always 200 {}', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    await approve(t, user.jwt, codes.user_code);
    const { access_token: value } = (await poll(t, codes.device_code)).json() as { access_token: string };
    const revoked = await form(t, '/oauth/revoke', { token: value, token_type_hint: 'access_token' });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({});
    expect((await json(t, 'GET', '/api/me', undefined, value)).statusCode).toBe(401);
    expect((await form(t, '/oauth/revoke', { token: 'nonsense' })).json()).toEqual({});
    const missing = await form(t, '/oauth/revoke', { token_type_hint: 'x' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'invalid_request' });
  });
});
