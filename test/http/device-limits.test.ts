import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { DEVICE_ENV, form, poll, requestDevice } from '../helpers/device.js';

const clock = new TestClock(Date.parse('2026-12-01T10:00:00Z'));
let t: TestApp;
/** The device limits on, the others that tests trip over (signups from one address) off. */
const LIMITS = { RATE_LIMITS: 'on', RATE_LIMIT_SIGNUP_ADDRESS: 'off', RATE_LIMIT_SIGNUP_EMAIL: 'off', RATE_LIMIT_ADDRESS: 'off', RATE_LIMIT_DEVICE_AUTHORIZATION: 'off' };
beforeAll(async () => {
  t = await startTestApp({ clock, env: { ...DEVICE_ENV, ...LIMITS, JWT_TTL_SECONDS: '86400', REAUTH_MAX_AGE_S: '86400' } });
});
afterAll(() => t.close());

let address = 0;
/** A client address of its own per test: the per-address limits start afresh. */
const nextAddress = () => `198.51.100.${++address}`;
const lookup = (jwt: string, code: string, remoteAddress: string) =>
  t.inject({ method: 'POST', url: '/api/device/lookup', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, payload: JSON.stringify({ user_code: code }), remoteAddress });

describe('user-code guessing (contract §13.9)', () => {
  it('11 wrong lookups by one user → 429, and the right code is refused too while limited', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t, {}, nextAddress());
    const from = nextAddress();
    for (let i = 0; i < 10; i++) expect((await lookup(user.jwt, 'BBBB-BBBB', from)).statusCode).toBe(404);
    const eleventh = await lookup(user.jwt, 'BBBB-BBBB', from);
    expect(eleventh.statusCode).toBe(429);
    expect(eleventh.headers['retry-after']).toBeDefined();
    const right = await lookup(user.jwt, codes.user_code, nextAddress());
    expect(right.statusCode).toBe(429);
    expect((right.json() as { code: string }).code).toBe('rate_limited');
  });

  it('the per-address limit holds across many users: the 21st failure from one address → 429', async () => {
    const from = nextAddress();
    const users = await Promise.all(Array.from({ length: 3 }, () => signup(t)));
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await lookup((users[i % 3] as { jwt: string }).jwt, 'CCCC-CCCC', from)).statusCode);
    expect(statuses.slice(0, 20).every((s) => s === 404)).toBe(true);
    expect(statuses[20]).toBe(429);
  });

  it('a code is served by its first 10 lookups; the 11th answers the 404 of an unknown code', async () => {
    const codes = await requestDevice(t, {}, nextAddress());
    for (let i = 0; i < 10; i++) {
      const user = await signup(t);
      expect((await lookup(user.jwt, codes.user_code, nextAddress())).statusCode).toBe(200);
    }
    const late = await signup(t);
    expect((await lookup(late.jwt, codes.user_code, nextAddress())).statusCode).toBe(404);
  });

  it('codes outside the alphabet never reach the store', async () => {
    const user = await signup(t);
    const spies = [vi.spyOn(t.services.device.requests, 'lookUp'), vi.spyOn(t.services.device.requests, 'pending')];
    // Eight failures: under the per-user limit of ten, so each answer is the 404 of a miss.
    for (const code of ['AAAA-AAAA', 'WDJB-MJH', "' or 1=1 --", 'wdjb-mjh€']) {
      expect((await lookup(user.jwt, code, nextAddress())).statusCode).toBe(404);
      expect((await json(t, 'POST', '/api/device/deny', { user_code: code }, user.jwt)).statusCode).toBe(404);
    }
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    const codes = await requestDevice(t, {}, nextAddress());
    expect((await lookup(user.jwt, codes.user_code.toLowerCase(), nextAddress())).statusCode).toBe(200);
    expect(spies[0]).toHaveBeenCalledTimes(1);
    for (const spy of spies) spy.mockRestore();
  });
});

describe('flooding', () => {
  it('the 11th pending request from one address → 429 rate_limited', async () => {
    const from = nextAddress();
    for (let i = 0; i < 10; i++) await requestDevice(t, {}, from);
    const res = await form(t, '/oauth/device_authorization', { client_id: 'rz-cli' }, from);
    expect(res.statusCode).toBe(429);
    expect((res.json() as { error: string }).error).toBe('rate_limited');
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('past the polling limit every poll is 429, whatever the code', async () => {
    const from = nextAddress();
    const codes = await requestDevice(t, {}, from);
    for (let i = 0; i < 60; i++) await poll(t, codes.device_code, 'rz-cli', from);
    const res = await poll(t, codes.device_code, 'rz-cli', from);
    expect(res.statusCode).toBe(429);
    expect((res.json() as { error: string }).error).toBe('rate_limited');
  });

  it('expired requests are pruned: no table growth after 10 000 expired requests', async () => {
    const { requests } = t.services.device;
    const at = new Date(clock.now()).toISOString();
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      device_code_digest: `digest-${i}`,
      user_code: `P${String(i).padStart(7, '0')}`,
      client_id: 'rz-cli',
      scopes: '[]',
      device_name: null,
      request_ip: '203.0.113.9',
      user_agent: null,
      created_at: at,
      expires_at: at,
      state: 'pending' as const,
      interval_s: 5,
      last_poll_at: null,
      approver_id: null,
      approved_scopes: null,
      approved_days: null,
      approved_name: null,
      token_id: null,
    }));
    const before = await requests.count();
    for (let i = 0; i < rows.length; i += 500) await t.services.database.db.insertInto('device_requests').values(rows.slice(i, i + 500)).execute();
    expect(await requests.count()).toBe(before + 10_000);
    clock.advance(2 * 3600 * 1000);
    await t.services.maintenance.runOnce();
    expect(await requests.count()).toBe(0);
  });
});
