import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { approve, DEVICE_ENV, DEVICE_GRANT, form, poll, requestDevice } from '../helpers/device.js';

const clock = new TestClock(Date.parse('2026-12-01T10:00:00Z'));
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, env: { ...DEVICE_ENV, JWT_TTL_SECONDS: '86400', REAUTH_MAX_AGE_S: '86400' } });
});
afterAll(() => t.close());

const errorOf = (res: { json(): unknown }) => (res.json() as { error: string }).error;

describe('POST /oauth/token: polling (RFC 8628 §3.5)', () => {
  it('faster than interval → slow_down, and the interval really grows: a poll at the old interval + 4 s is slow_down again', async () => {
    const codes = await requestDevice(t);
    expect(errorOf(await poll(t, codes.device_code))).toBe('authorization_pending');
    clock.advance(1000);
    expect(errorOf(await poll(t, codes.device_code))).toBe('slow_down');
    // The interval is now 10 s from the slow poll: 9 s later is still too soon.
    clock.advance(9000);
    expect(errorOf(await poll(t, codes.device_code))).toBe('slow_down');
    clock.advance(15_000);
    expect(errorOf(await poll(t, codes.device_code))).toBe('authorization_pending');
  });

  it('expired_token after expires_in', async () => {
    const codes = await requestDevice(t);
    clock.advance(codes.expires_in * 1000);
    const res = await poll(t, codes.device_code);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toBe('expired_token');
  });

  it('unknown and other-client device codes give byte-identical invalid_grant (but for the request id)', async () => {
    const codes = await requestDevice(t);
    const unknown = await poll(t, 'A'.repeat(43));
    const other = await poll(t, codes.device_code, 'game-cli');
    const body = (res: { body: string }) => res.body.replace(/"request_id":"[^"]*"/, '');
    expect(unknown.statusCode).toBe(400);
    expect(other.statusCode).toBe(400);
    expect(body(unknown)).toBe(body(other));
    expect(errorOf(unknown)).toBe('invalid_grant');
  });

  it('20 parallel polls after approval → exactly one 200, nineteen invalid_grant; a redeemed code never works again', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    await approve(t, user.jwt, codes.user_code);
    const answers = await Promise.all(Array.from({ length: 20 }, () => poll(t, codes.device_code)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.statusCode === 400 && errorOf(r) === 'invalid_grant')).toHaveLength(19);
    clock.advance(60_000);
    expect(errorOf(await poll(t, codes.device_code))).toBe('invalid_grant');
  });

  it('denied → access_denied once, then invalid_grant', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    const denied = await json(t, 'POST', '/api/device/deny', { user_code: codes.user_code }, user.jwt);
    expect(denied.statusCode, denied.body).toBe(204);
    expect(errorOf(await poll(t, codes.device_code))).toBe('access_denied');
    clock.advance(10_000);
    expect(errorOf(await poll(t, codes.device_code))).toBe('invalid_grant');
  });

  it('a user deleted between approval and redemption → access_denied, no token', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    await approve(t, user.jwt, codes.user_code);
    expect(await t.services.users.delete(user.id)).toBe(true);
    const res = await poll(t, codes.device_code);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toBe('access_denied');
    expect(res.body).not.toContain('rz_');
  });

  it('other grant types → unsupported_grant_type; a missing parameter → invalid_request; every answer no-store', async () => {
    const other = await form(t, '/oauth/token', { grant_type: 'password', client_id: 'rz-cli' });
    expect(errorOf(other)).toBe('unsupported_grant_type');
    const missing = await form(t, '/oauth/token', { grant_type: DEVICE_GRANT, client_id: 'rz-cli' });
    expect(errorOf(missing)).toBe('invalid_request');
    for (const res of [other, missing]) {
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.json() as object).sort()).toEqual(['error', 'error_description', 'request_id']);
    }
  });
});
