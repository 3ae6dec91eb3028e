import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectInvalidToken, expectProblem, json, login, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { mfaEnv, mfaToken, verify } from '../helpers/mfa.js';

const CHALLENGE = 'Bearer realm="rz", error="insufficient_user_authentication", max_age="900"';

/** Contract §12.3: the user's factors and recovery codes over HTTP. */
describe('/api/me/mfa', () => {
  let t: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    t = await startTestApp({ clock, env: mfaEnv() });
  });
  afterAll(() => t.close());

  const start = async (jwt: string) => {
    const res = await json(t, 'POST', '/api/me/mfa/totp', undefined, jwt);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { factor_id: string; secret: string; otpauth_uri: string };
  };
  const confirm = (jwt: string, id: string, code: string, name?: string) => json(t, 'POST', `/api/me/mfa/totp/${id}/confirm`, { code, ...(name ? { name } : {}) }, jwt);

  /** A user who added an authenticator app through the routes; the clock is then one step on. */
  async function enrolled(): Promise<{ user: TestUser; secret: string; factorId: string; codes: string[] }> {
    const user = await signup(t);
    const started = await start(user.jwt);
    const res = await confirm(user.jwt, started.factor_id, totpCodeAt(started.secret, clock.now()), 'Phone');
    expect(res.statusCode, res.body).toBe(200);
    clock.advance(30_000);
    return { user, secret: started.secret, factorId: started.factor_id, codes: res.json().recovery_codes };
  }

  it('enrols an authenticator app: secret and URI once, confirmed by its first code, with the first recovery codes', async () => {
    const user = await signup(t);
    const started = await start(user.jwt);
    expect(started.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.otpauth_uri).toBe(`otpauth://totp/${encodeURIComponent(t.config.mfa.totpIssuer)}:${encodeURIComponent(user.username)}?secret=${started.secret}&issuer=${encodeURIComponent(t.config.mfa.totpIssuer)}&algorithm=SHA1&digits=6&period=30`);
    const res = await confirm(user.jwt, started.factor_id, totpCodeAt(started.secret, clock.now()), 'Phone');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.factor).toMatchObject({ id: started.factor_id, type: 'totp', name: 'Phone', passkey: false, synced: false });
    expect(body.recovery_codes).toHaveLength(10);
    for (const code of body.recovery_codes) expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
    const listed = await json(t, 'GET', '/api/me/mfa', undefined, user.jwt);
    expect(listed.json()).toEqual({ factors: [body.factor], recovery_codes_remaining: 10, required_by: null });
    expect(listed.body).not.toContain(started.secret);
    const types = (await t.services.audit.list({ userId: user.id, limit: 50 })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['mfa.factor_added', 'mfa.recovery_codes_generated']));
    // The secret is ciphertext in the database, and appears in no audit event.
    const row = await t.services.database.db.selectFrom('mfa_factors').select('totp_secret').where('id', '=', started.factor_id).executeTakeFirstOrThrow();
    expect(row.totp_secret).toMatch(/^sealed:v1:/);
    expect(row.totp_secret).not.toContain(started.secret);
    expect(JSON.stringify(await t.services.audit.list({ userId: user.id, limit: 50 }))).not.toContain(started.secret);
    // From now on the login takes two steps.
    clock.advance(30_000);
    expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(started.secret, clock.now()))).statusCode).toBe(200);
  });

  it('enrolling a first factor with a JWT older than the window → 401 with the RFC 9470 challenge (session theft cannot persist)', async () => {
    const user = await signup(t);
    clock.advance(900_001);
    const res = await json(t, 'POST', '/api/me/mfa/totp', undefined, user.jwt);
    expectProblem(res, 401, 'insufficient_user_authentication');
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it('an mfa_token cannot enrol anything: it is no bearer token', async () => {
    const { user } = await enrolled();
    expectInvalidToken(await json(t, 'POST', '/api/me/mfa/totp', undefined, await mfaToken(t, user.email, PASSWORD)));
  });

  it('a wrong first code → 401 invalid_credentials (audited); an unknown factor → 404', async () => {
    const user = await signup(t);
    const started = await start(user.jwt);
    const wrong = totpCodeAt(started.secret, clock.now()) === '000000' ? '111111' : '000000';
    expectProblem(await confirm(user.jwt, started.factor_id, wrong), 401, 'invalid_credentials');
    const [failed] = await t.services.audit.list({ userId: user.id, type: 'mfa.challenge_failed', limit: 1 });
    expect(failed?.details).toEqual({ method: 'totp', reason: 'mismatch' });
    expectProblem(await confirm(user.jwt, randomUUID(), '123456'), 404, 'not_found');
  });

  it('a pending app disappears after 15 minutes, and a newer start replaces it', async () => {
    const user = await signup(t);
    const old = await start(user.jwt);
    const newer = await start(user.jwt);
    expectProblem(await confirm(user.jwt, old.factor_id, totpCodeAt(old.secret, clock.now())), 404, 'not_found');
    const fresh = await login(t, user.email);
    clock.advance(15 * 60_000);
    expectProblem(await confirm(fresh, newer.factor_id, totpCodeAt(newer.secret, clock.now())), 401, 'insufficient_user_authentication');
    const again = await login(t, user.email);
    expectProblem(await confirm(again, newer.factor_id, totpCodeAt(newer.secret, clock.now())), 404, 'not_found');
  });

  it('rename and remove; removing ends every other session', async () => {
    const { user, secret, factorId } = await enrolled();
    const jwt = (await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(secret, clock.now()))).json().token;
    const renamed = await json(t, 'PATCH', `/api/me/mfa/${factorId}`, { name: 'Old phone' }, jwt);
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: factorId, name: 'Old phone' });
    expect((await json(t, 'DELETE', `/api/me/mfa/${factorId}`, undefined, jwt)).statusCode).toBe(204);
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, user.jwt));
    expect((await json(t, 'GET', '/api/me/mfa', undefined, jwt)).json().factors).toEqual([]);
    const [removed] = await t.services.audit.list({ userId: user.id, type: 'mfa.factor_removed', limit: 1 });
    expect(removed?.details).toEqual({ sessions_ended: 1 });
    // Without a factor, the password logs in again.
    await login(t, user.email);
    expectProblem(await json(t, 'DELETE', `/api/me/mfa/${factorId}`, undefined, jwt), 404, 'not_found');
  });

  it('regenerating recovery codes ends the old set', async () => {
    const { user, secret, codes } = await enrolled();
    const jwt = (await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(secret, clock.now()))).json().token;
    const res = await json(t, 'POST', '/api/me/mfa/recovery-codes', undefined, jwt);
    expect(res.statusCode, res.body).toBe(200);
    const fresh = res.json().recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expectProblem(await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', codes[0] as string), 401, 'invalid_credentials');
    expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', fresh[0] as string)).statusCode).toBe(200);
  });

  it('a NUL in a factor name or id answered 500 on PostgreSQL: now 400 naming name, and 404 for the id', async () => {
    const { user, secret, factorId } = await enrolled();
    const jwt = (await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(secret, clock.now()))).json().token;
    for (const name of ['\u0000', 'a\u0000b', '\u200b ']) {
      const res = expectProblem(await json(t, 'PATCH', `/api/me/mfa/${factorId}`, { name }, jwt), 400, 'validation_failed');
      expect(res.errors).toEqual([expect.objectContaining({ field: 'name' })]);
    }
    for (const id of ['%00', 'a%00b', 'not-a-uuid']) {
      expectProblem(await json(t, 'DELETE', `/api/me/mfa/${id}`, undefined, jwt), 404, 'not_found');
      expectProblem(await json(t, 'PATCH', `/api/me/mfa/${id}`, { name: 'Phone' }, jwt), 404, 'not_found');
    }
    expect((await json(t, 'PATCH', `/api/me/mfa/${factorId}`, { name: '  Work phone ' }, jwt)).json()).toMatchObject({ name: 'Work phone' });
  });

  it('a write under /api/me/mfa from a user with a factor needs the factor in amr', async () => {
    const { user } = await enrolled();
    // The signup JWT (amr ["pwd"]) is still alive and fresh.
    const res = await json(t, 'POST', '/api/me/mfa/recovery-codes', undefined, user.jwt);
    expectProblem(res, 401, 'insufficient_user_authentication');
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  });

  describe('MFA_REQUIRED=true', () => {
    it('the last factor cannot be removed (409); required_by shows the grace period to a user without one', async () => {
      const strict = await startTestApp({ clock, env: { ...mfaEnv(), MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '14' } });
      try {
        const user = await signup(strict);
        const listed = (await json(strict, 'GET', '/api/me/mfa', undefined, user.jwt)).json();
        expect(listed.required_by).toBe(new Date(clock.now() + 14 * 86_400_000).toISOString());
        const started = (await json(strict, 'POST', '/api/me/mfa/totp', undefined, user.jwt)).json();
        const confirmed = await json(strict, 'POST', `/api/me/mfa/totp/${started.factor_id}/confirm`, { code: totpCodeAt(started.secret, clock.now()) }, user.jwt);
        expect(confirmed.statusCode, confirmed.body).toBe(200);
        clock.advance(30_000);
        const jwt = (await verify(strict, await mfaToken(strict, user.email, PASSWORD), 'totp', totpCodeAt(started.secret, clock.now()))).json().token;
        expectProblem(await json(strict, 'DELETE', `/api/me/mfa/${started.factor_id}`, undefined, jwt), 409, 'conflict');
      } finally {
        await strict.close();
      }
    });
  });
});
