import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalidToken, json, login, PASSWORD, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { approve, DEVICE_ENV, poll, requestDevice } from '../helpers/device.js';
import { addTotp, mfaEnv, mfaToken } from '../helpers/mfa.js';

const DAY_MS = 86_400_000;
const errorOf = (res: { json(): unknown }) => (res.json() as { error: string }).error;

/**
 * The device flow under second factors (contract §12.10's bypass shapes, §13.5): an mfa_token is
 * no bearer on the approval API, an enrolment-only token cannot approve, and a user whose grace
 * ran out between approval and redemption gets access_denied, not a token.
 */
describe('device flow and MFA_REQUIRED', () => {
  let t: TestApp;
  const clock = new TestClock(Date.parse('2026-12-01T10:00:00Z'));
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { ...DEVICE_ENV, ...mfaEnv(), MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '1' } });
  });
  afterAll(() => t.close());

  it('grace over between approval and redemption → access_denied and no token', async () => {
    const user = await signup(t);
    // The requirement first applies now: the grace runs a day from here.
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).json().mfa.required_by).toBe(new Date(clock.now() + DAY_MS).toISOString());
    clock.advance(DAY_MS - 5 * 60_000);
    const jwt = await login(t, user.email);
    const codes = await requestDevice(t);
    await approve(t, jwt, codes.user_code);
    clock.advance(10 * 60_000);
    const res = await poll(t, codes.device_code);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toBe('access_denied');
    expect(res.body).not.toContain('rz_');
  });

  it('an enrolment-only token (grace over) cannot look up or approve: 403 mfa_enrollment_required', async () => {
    const user = await signup(t);
    await json(t, 'GET', '/api/me', undefined, user.jwt);
    clock.advance(DAY_MS + 60_000);
    const enrolOnly = await login(t, user.email);
    const codes = await requestDevice(t);
    for (const path of ['/api/device/lookup', '/api/device/approve']) {
      const res = await json(t, 'POST', path, { user_code: codes.user_code }, enrolOnly);
      expect(res.statusCode, path).toBe(403);
      expect(res.json().code).toBe('mfa_enrollment_required');
    }
  });

  it('an mfa_token as the bearer of the approval API → 401 invalid_token', async () => {
    const user = await signup(t);
    await addTotp(t, clock, user.id);
    const token = await mfaToken(t, user.email, PASSWORD);
    const codes = await requestDevice(t);
    expectInvalidToken(await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, token));
    expectInvalidToken(await json(t, 'POST', '/api/device/lookup', { user_code: codes.user_code }, token));
  });
});
