import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import type { AuditType } from '../../src/audit/events.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectInvalidToken, expectProblem, json, login, PASSWORD, signup } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { addRecoveryCodes, addTotp, mfaEnv, mfaToken, verify } from '../helpers/mfa.js';

/** Contract §12.4: login in two steps, `amr` and `auth_time`. */
describe('login with a second factor', () => {
  let t: TestApp;
  const clock = new TestClock();
  const serviceCredential = async () => (await t.services.serviceCredentials.create('mfa-test')).token;
  const events = async (userId: string, type: AuditType) => t.services.audit.list({ userId, type, limit: 100 });
  const introspect = async (token: string) => {
    const res = await t.inject({ method: 'POST', url: '/api/introspect', headers: { authorization: `Bearer ${await serviceCredential()}`, 'content-type': 'application/json' }, payload: JSON.stringify({ token }) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Record<string, unknown>;
  };
  const withTotp = async () => {
    const user = await signup(t);
    return { user, totp: await addTotp(t, clock, user.id) };
  };

  beforeAll(async () => {
    t = await startTestApp({ clock, env: mfaEnv() });
  });
  afterAll(() => t.close());

  describe('a user without a factor', () => {
    it('logs in as before, with amr ["pwd"] and auth_time in the JWT, /api/me, the sessions and introspection', async () => {
      const user = await signup(t);
      const token = await login(t, user.email);
      const claims = decodeJwt(token);
      expect(claims.amr).toEqual(['pwd']);
      expect(claims.auth_time).toBe(Math.floor(clock.now() / 1000));
      const me = (await json(t, 'GET', '/api/me', undefined, token)).json();
      expect(me.auth).toMatchObject({ type: 'user', amr: ['pwd'], auth_time: new Date(clock.now()).toISOString() });
      const sessions = (await json(t, 'GET', '/api/auth/sessions', undefined, token)).json().sessions;
      expect(sessions[0]).toMatchObject({ amr: ['pwd'], auth_time: new Date(clock.now()).toISOString() });
      expect(await introspect(token)).toMatchObject({ active: true, amr: ['pwd'], auth_time: Math.floor(clock.now() / 1000) });
      const [event] = await events(user.id, 'login.succeeded');
      expect(event?.details).toEqual({ amr: ['pwd'] });
    });

    it('API tokens show neither amr nor auth_time', async () => {
      const user = await signup(t);
      const created = (await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).json();
      const me = (await json(t, 'GET', '/api/me', undefined, created.token)).json();
      expect(me.auth).not.toHaveProperty('amr');
      expect(me.auth).not.toHaveProperty('auth_time');
      const answer = await introspect(created.token);
      expect(answer).not.toHaveProperty('amr');
    });
  });

  describe('the first step', () => {
    it('a right password answers 401 mfa_required with an mfa_token and the user\'s methods; no session', async () => {
      const { user } = await withTotp();
      const codes = await addRecoveryCodes(t, user.id);
      expect(codes).toHaveLength(10);
      const res = await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD });
      const problem = expectProblem(res, 401, 'mfa_required');
      expect(problem).toMatchObject({ type: '/problems/mfa-required', title: 'Second factor required', methods: ['totp', 'recovery_code'], expires_in: 300 });
      expect(problem.mfa_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.headers['www-authenticate']).toBeUndefined();
      const sessions = (await json(t, 'GET', '/api/auth/sessions', undefined, user.jwt)).json().sessions;
      expect(sessions).toHaveLength(1);
      expect(await events(user.id, 'login.password_ok_mfa_pending')).toHaveLength(1);
      expect(await events(user.id, 'login.succeeded')).toHaveLength(0);
    });

    it('a wrong password still answers invalid_credentials, with the same body as for a user without a factor', async () => {
      const { user } = await withTotp();
      const plain = await signup(t);
      const withFactor = expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: 'wrong password, long enough' }), 401, 'invalid_credentials');
      const without = expectProblem(await json(t, 'POST', '/api/auth/login', { email: plain.email, password: 'wrong password, long enough' }), 401, 'invalid_credentials');
      expect({ ...withFactor, request_id: null }).toEqual({ ...without, request_id: null });
    });
  });

  describe('POST /api/auth/mfa/verify', () => {
    it('a TOTP code logs in: amr ["pwd","otp","mfa"] in the JWT, /api/me, the sessions, introspection and login.succeeded', async () => {
      const { user, totp } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      const res = await verify(t, token, 'totp', totp.code());
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['token', 'user']);
      expect(body.user).toEqual({ id: user.id, username: user.username, email: user.email });
      const amr = ['pwd', 'otp', 'mfa'];
      expect(decodeJwt(body.token)).toMatchObject({ amr, auth_time: Math.floor(clock.now() / 1000) });
      expect((await json(t, 'GET', '/api/me', undefined, body.token)).json().auth).toMatchObject({ amr });
      const sessions = (await json(t, 'GET', '/api/auth/sessions', undefined, body.token)).json().sessions;
      expect(sessions.find((s: { current: boolean }) => s.current)).toMatchObject({ amr });
      expect(await introspect(body.token)).toMatchObject({ active: true, amr });
      const [event] = await events(user.id, 'login.succeeded');
      expect(event?.details).toEqual({ amr });
    });

    it('the mfa_token is single-use: reused after success → 401', async () => {
      const { user, totp } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      expect((await verify(t, token, 'totp', totp.code())).statusCode).toBe(200);
      clock.advance(30_000);
      expectProblem(await verify(t, token, 'totp', totp.code()), 401, 'invalid_credentials');
    });

    it('a sixth attempt after five failures → 401 even with the right code', async () => {
      const { user, totp } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      const wrong = totp.code() === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) expectProblem(await verify(t, token, 'totp', wrong), 401, 'invalid_credentials');
      expectProblem(await verify(t, token, 'totp', totp.code()), 401, 'invalid_credentials');
      // A new login still works: the dead token did not lock the account (5 of its 10).
      expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totp.code())).statusCode).toBe(200);
    });

    it('the mfa_token expires after 5 minutes', async () => {
      const { user, totp } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      clock.advance(300_000);
      expectProblem(await verify(t, token, 'totp', totp.code()), 401, 'invalid_credentials');
    });

    it("one user's mfa_token with another user's code → 401", async () => {
      const a = await withTotp();
      const b = await withTotp();
      const token = await mfaToken(t, a.user.email, PASSWORD);
      expectProblem(await verify(t, token, 'totp', b.totp.code()), 401, 'invalid_credentials');
    });

    it('every failure has one body, and no mfa_token shape reaches a lookup', async () => {
      const { user, totp } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      const bodies = [];
      for (const [mfa, code] of [
        ['not-a-token', totp.code()],
        [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, totp.code()],
        [token, '12345'],
      ] as const) {
        const problem = expectProblem(await verify(t, mfa, 'totp', code), 401, 'invalid_credentials');
        bodies.push({ ...problem, request_id: null });
      }
      expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    });
  });

  describe('the mfa_token is no bearer token', () => {
    it('on /api/me, /api/tokens and /api/auth/sessions → 401 invalid_token; introspection → active:false', async () => {
      const { user } = await withTotp();
      const token = await mfaToken(t, user.email, PASSWORD);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token));
      expectInvalidToken(await json(t, 'POST', '/api/tokens', { name: 'x' }, token));
      expectInvalidToken(await json(t, 'GET', '/api/auth/sessions', undefined, token));
      expect(await introspect(token)).toEqual({ active: false });
    });
  });

  describe('TOTP (contract §12.10)', () => {
    it('the same code twice in the same step: the second login → 401, and the audit says replayed', async () => {
      const { user, totp } = await withTotp();
      const code = totp.code();
      expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', code)).statusCode).toBe(200);
      expectProblem(await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', code), 401, 'invalid_credentials');
      const [failed] = await events(user.id, 'mfa.challenge_failed');
      expect(failed?.details).toEqual({ method: 'totp', reason: 'replayed' });
    });

    it('two parallel verifies with one valid code → exactly one succeeds', async () => {
      const { user, totp } = await withTotp();
      const tokens = [await mfaToken(t, user.email, PASSWORD), await mfaToken(t, user.email, PASSWORD)];
      const code = totp.code();
      const answers = await Promise.all(tokens.map((token) => verify(t, token, 'totp', code)));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
    });

    it('codes from T−2 and T+2 → 401; T−1 and T+1 are accepted', async () => {
      const { user, totp } = await withTotp();
      // The enrolment accepted the step before this one: move on so that T−1 is a fresh step.
      clock.advance(30_000);
      for (const offset of [-60_000, 60_000]) {
        expectProblem(await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(totp.secret, clock.now() + offset)), 401, 'invalid_credentials');
      }
      expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(totp.secret, clock.now() - 30_000))).statusCode).toBe(200);
      expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(totp.secret, clock.now() + 30_000))).statusCode).toBe(200);
    });

    it('full-width digits, 5 or 7 digits and a sign → 401; "12 34 56" with spaces is accepted', async () => {
      const { user, totp } = await withTotp();
      const code = totp.code();
      const fullWidth = [...code].map((d) => String.fromCharCode(0xff10 + Number(d))).join('');
      for (const bad of [fullWidth, code.slice(0, 5), `${code}7`, `+${code}`]) {
        expectProblem(await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', bad), 401, 'invalid_credentials');
      }
      const spaced = `${code.slice(0, 2)} ${code.slice(2, 4)} ${code.slice(4)}`;
      expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', spaced)).statusCode).toBe(200);
    });

    it('the TOTP secret appears in no answer, log line or audit event of a login', async () => {
      const { user, totp } = await withTotp();
      const first = await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD });
      const second = await verify(t, first.json().mfa_token, 'totp', totp.code());
      const audit = JSON.stringify(await t.services.audit.list({ userId: user.id, limit: 100 }));
      for (const text of [first.body, second.body, (await t.settledLogs()).join(''), audit]) expect(text).not.toContain(totp.secret);
    });
  });

  describe('recovery codes', () => {
    it('a code logs in once, counts as otp, says how many are left and is audited', async () => {
      const user = await signup(t);
      await addTotp(t, clock, user.id);
      const codes = await addRecoveryCodes(t, user.id);
      const res = await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', (codes[0] as string).toLowerCase());
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().recovery_codes_remaining).toBe(9);
      expect(decodeJwt(res.json().token).amr).toEqual(['pwd', 'otp', 'mfa']);
      const [used] = await events(user.id, 'mfa.recovery_code_used');
      expect(used?.details).toEqual({ method: 'recovery_code', recovery_codes_remaining: 9 });
      expectProblem(await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', codes[0] as string), 401, 'invalid_credentials');
    });

    it('one code used in parallel logs in once', async () => {
      const user = await signup(t);
      await addTotp(t, clock, user.id);
      const [code] = await addRecoveryCodes(t, user.id);
      const tokens = await Promise.all(Array.from({ length: 5 }, () => mfaToken(t, user.email, PASSWORD)));
      const answers = await Promise.all(tokens.map((token) => verify(t, token, 'recovery_code', code as string)));
      expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    });
  });

  describe('brute force (contract §12.6)', () => {
    const wrongCode = (user: { totp: { code: () => string } }) => (user.totp.code() === '000000' ? '111111' : '000000');

    it('10 failures from rotating addresses lock the user: 429 with Retry-After, the right code included; mfa.locked', async () => {
      const target = await withTotp();
      for (let i = 0; i < 10; i++) {
        const address = `203.0.113.${i + 1}`;
        const token = await mfaToken(t, target.user.email, PASSWORD, address);
        expectProblem(await verify(t, token, 'totp', wrongCode(target), address), 401, 'invalid_credentials');
      }
      const token = await mfaToken(t, target.user.email, PASSWORD, '198.51.100.1');
      const locked = expectProblem(await verify(t, token, 'totp', target.totp.code(), '198.51.100.1'), 429, 'rate_limited');
      expect(locked.status).toBe(429);
      const retryAfter = Number((await verify(t, token, 'totp', target.totp.code())).headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(900);
      const [event] = await events(target.user.id, 'mfa.locked');
      expect(event?.details.locked_until).toEqual(expect.any(String));
      // The window passes: the right code works again.
      clock.advance(15 * 60_000);
      expect((await verify(t, await mfaToken(t, target.user.email, PASSWORD), 'totp', target.totp.code())).statusCode).toBe(200);
    });

    it('50 parallel wrong guesses over 10 mfa_tokens: exactly 10 are compared (401), the rest 429', async () => {
      const target = await withTotp();
      const tokens = await Promise.all(Array.from({ length: 10 }, () => mfaToken(t, target.user.email, PASSWORD)));
      const guesses = tokens.flatMap((token) => Array.from({ length: 5 }, () => verify(t, token, 'totp', wrongCode(target))));
      const statuses = (await Promise.all(guesses)).map((a) => a.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      clock.advance(15 * 60_000);
    });
  });
});
