import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { DEVICE_ENV, poll, requestDevice } from '../helpers/device.js';
import { addTotp, mfaEnv } from '../helpers/mfa.js';

const clock = new TestClock(Date.parse('2026-12-01T10:00:00Z'));
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, env: { ...DEVICE_ENV, JWT_TTL_SECONDS: '86400', REAUTH_MAX_AGE_S: '900', TOKEN_MAX_LIFETIME_DAYS: '30' } });
});
afterAll(() => t.close());

describe('POST /api/device/approve: a recent login, and the token it leads to', () => {
  it('a JWT older than REAUTH_MAX_AGE_S → 401 insufficient_user_authentication with max_age, even without a second factor', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    clock.advance(901_000);
    const res = await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt);
    expect(res.statusCode).toBe(401);
    expect((res.json() as { code: string }).code).toBe('insufficient_user_authentication');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="rz", error="insufficient_user_authentication", max_age="900"');
  });

  it('expires_in_days beyond TOKEN_MAX_LIFETIME_DAYS → 400 naming it; by default the token is capped by it', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t, { device_name: 'ci-box' });
    const tooLong = await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code, expires_in_days: 60 }, user.jwt);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'expires_in_days' }] });
    expect((await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code, name: 'my box' }, user.jwt)).statusCode).toBe(204);
    const issued = await poll(t, codes.device_code);
    expect(issued.statusCode, issued.body).toBe(200);
    expect(issued.json()).toMatchObject({ expires_in: 30 * 86400, scope: '' });
    const { token_id: id } = issued.json() as { token_id: string };
    const detail = await json(t, 'GET', `/api/tokens/${id}`, undefined, user.jwt);
    expect(detail.json()).toMatchObject({ name: 'my box', origin: 'device_flow', device_name: 'ci-box' });
  });

  it('audit: device.approved and token.created with details.origin device_flow, client_id, device_name, request_ip', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t, { device_name: 'audit-box' });
    expect((await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt)).statusCode).toBe(204);
    expect((await poll(t, codes.device_code)).statusCode).toBe(200);
    const events = (await json(t, 'GET', '/api/audit', undefined, user.jwt)).json() as { events: Array<{ type: string; details: Record<string, unknown> }> };
    const created = events.events.find((e) => e.type === 'token.created');
    expect(created?.details).toMatchObject({ origin: 'device_flow', client_id: 'rz-cli', device_name: 'audit-box', request_ip: '127.0.0.1' });
    expect(events.events.map((e) => e.type)).toContain('device.approved');
  });

  it('no log line holds a device code, a user code or the issued token', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    await json(t, 'POST', '/api/device/lookup', { user_code: codes.user_code }, user.jwt);
    await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt);
    const { access_token: value } = (await poll(t, codes.device_code)).json() as { access_token: string };
    // The device page's link carries the user code in its query; a confused client may send the device code there too.
    await t.inject({ method: 'GET', url: `/device?user_code=${codes.user_code}` });
    await t.inject({ method: 'POST', url: `/oauth/token?device_code=${codes.device_code}&USER_CODE=${codes.user_code.replace('-', '')}`, payload: {} });
    const logs = (await t.settledLogs()).join('\n');
    for (const secret of [codes.device_code, codes.user_code, codes.user_code.replace('-', ''), value]) expect(logs).not.toContain(secret);
  });
});

describe('a pending request survives a restart', () => {
  it('reopening the same SQLite file: the code is still pending, then approved and redeemed', async () => {
    if (process.env.TEST_DATABASE === 'postgres') return;
    const first = await startTestApp({ env: { ...DEVICE_ENV } });
    const codes = await requestDevice(first);
    const dir = first.dir;
    await first.app.close();
    await first.services.close();
    const second = await startTestApp({ dir, env: { ...DEVICE_ENV } });
    try {
      const user = await signup(second);
      expect((await json(second, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt)).statusCode).toBe(204);
      expect((await poll(second, codes.device_code)).statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('approving with a second factor (contract §12.5)', () => {
  it('a password-only JWT of a user with a factor → 401 insufficient_user_authentication; after reauth with the factor → 204', async () => {
    const mfaClock = new TestClock(Date.parse('2026-12-02T10:00:00Z'));
    const m = await startTestApp({ clock: mfaClock, env: { ...DEVICE_ENV, ...mfaEnv() } });
    try {
      const user = await signup(m);
      const { code } = await addTotp(m, mfaClock, user.id);
      const codes = await requestDevice(m);
      const refused = await json(m, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt);
      expect(refused.statusCode).toBe(401);
      expect((refused.json() as { code: string }).code).toBe('insufficient_user_authentication');
      const reauth = await json(m, 'POST', '/api/auth/reauth', { method: 'totp', code: code() }, user.jwt);
      expect(reauth.statusCode, reauth.body).toBe(200);
      const { token } = reauth.json() as { token: string };
      expect((await json(m, 'POST', '/api/device/approve', { user_code: codes.user_code }, token)).statusCode).toBe(204);
    } finally {
      await m.close();
    }
  });
});
