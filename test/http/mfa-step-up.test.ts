import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectProblem, json, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { addRecoveryCodes, addTotp, mfaEnv, mfaToken, verify } from '../helpers/mfa.js';

const CHALLENGE = 'Bearer realm="rz", error="insufficient_user_authentication", max_age="900"';
const WINDOW_MS = 900_000;

/** Every route of contract §12.5, with a body its schema accepts, so that only step-up can refuse it. */
const LISTED: ReadonlyArray<readonly [string, 'POST' | 'DELETE', (id: string) => string, unknown]> = [
  ['create an API token', 'POST', () => '/api/tokens', { name: 'ci' }],
  ['rotate a token', 'POST', (id) => `/api/tokens/${id}/rotate`, {}],
  ['register an app', 'POST', () => '/api/apps', { name: 'Game' }],
  ['issue an app token', 'POST', (id) => `/api/apps/${id}/tokens`, {}],
  ['add a webhook', 'POST', () => '/api/webhooks', { url: 'https://93.184.215.14/hooks/rz', event_types: ['token.created'] }],
  ['delete a webhook', 'DELETE', (id) => `/api/webhooks/${id}`, undefined],
  ['change the password', 'POST', () => '/api/auth/password', { current_password: PASSWORD, new_password: 'another long passphrase here' }],
  ['delete the account', 'DELETE', () => '/api/me', { password: PASSWORD }],
];

function expectStepUp(res: Awaited<ReturnType<typeof json>>): void {
  expectProblem(res, 401, 'insufficient_user_authentication');
  expect(res.headers['www-authenticate']).toBe(CHALLENGE);
}

/** Contract §12.5: RFC 9470 step-up and POST /api/auth/reauth. */
describe('step-up', () => {
  let t: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    t = await startTestApp({ clock, env: mfaEnv() });
  });
  afterAll(() => t.close());

  /** A user with an authenticator app, logged in with it just now. */
  async function withFactor(): Promise<{ user: TestUser; jwt: string; code: () => string }> {
    const user = await signup(t);
    const totp = await addTotp(t, clock, user.id);
    const res = await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totp.code());
    expect(res.statusCode, res.body).toBe(200);
    clock.advance(30_000);
    return { user, jwt: res.json().token, code: totp.code };
  }

  describe('a user with a factor', () => {
    it.each(LISTED)('%s with a JWT older than the window → 401 with the exact RFC 9470 challenge', async (_name, method, path, body) => {
      const { jwt } = await withFactor();
      clock.advance(WINDOW_MS);
      expectStepUp(await json(t, method, path(randomUUID()), body, jwt));
    });

    it.each(LISTED)('%s with a fresh JWT whose amr is ["pwd"] → 401', async (_name, method, path, body) => {
      // The signup token predates the factor: a password login.
      const user = await signup(t);
      await addTotp(t, clock, user.id);
      expectStepUp(await json(t, method, path(randomUUID()), body, user.jwt));
    });

    it('a fresh JWT from a second-factor login passes', async () => {
      const { jwt } = await withFactor();
      expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, jwt)).statusCode).toBe(201);
    });

    it('unlisted routes are unaffected', async () => {
      const { jwt } = await withFactor();
      clock.advance(WINDOW_MS + 1000);
      expect((await json(t, 'GET', '/api/tokens', undefined, jwt)).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, jwt)).statusCode).toBe(200);
    });

    it('reauth with a TOTP code: a new JWT for the same session, auth_time now, amr with otp; it passes step-up', async () => {
      const { user, jwt, code } = await withFactor();
      clock.advance(WINDOW_MS + 1000);
      const res = await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: code() }, jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(Object.keys(res.json())).toEqual(['token']);
      const fresh = res.json().token as string;
      expect(decodeJwt(fresh)).toMatchObject({ sid: decodeJwt(jwt).sid, amr: ['pwd', 'otp', 'mfa'], auth_time: Math.floor(clock.now() / 1000) });
      expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, fresh)).statusCode).toBe(201);
      const sessions = (await json(t, 'GET', '/api/auth/sessions', undefined, fresh)).json().sessions;
      expect(sessions.find((s: { current: boolean }) => s.current)).toMatchObject({ auth_time: new Date(Math.floor(clock.now() / 1000) * 1000).toISOString() });
      const [event] = await t.services.audit.list({ userId: user.id, type: 'auth.reauth', limit: 1 });
      expect(event?.details).toEqual({ amr: ['pwd', 'otp', 'mfa'] });
    });

    it('a reauth token outlives the session it was issued for: the session now ends with the new token', async () => {
      const { jwt, code } = await withFactor();
      // Near the end of the session, a step-up gives a token that lives a full TTL from now.
      clock.advance(50 * 60_000);
      const res = await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: code() }, jwt);
      expect(res.statusCode, res.body).toBe(200);
      const fresh = res.json().token as string;
      clock.advance(20 * 60_000);
      // Past the first token's end, before the new one's: the new token works, and the session ends with it.
      expect((await json(t, 'GET', '/api/me', undefined, fresh)).statusCode).toBe(200);
      const sid = decodeJwt(fresh).sid as string;
      const session = await t.services.database.db.selectFrom('sessions').select('expires_at').where('id', '=', sid).executeTakeFirstOrThrow();
      expect(session.expires_at).toBe(new Date((decodeJwt(fresh).exp ?? 0) * 1000).toISOString());
      expectProblem(await json(t, 'GET', '/api/me', undefined, jwt), 401, 'invalid_token');
    });

    it('reauth with a recovery code works, once', async () => {
      const { user, jwt } = await withFactor();
      const [code] = await addRecoveryCodes(t, user.id);
      expect((await json(t, 'POST', '/api/auth/reauth', { method: 'recovery_code', code }, jwt)).statusCode).toBe(200);
      expectProblem(await json(t, 'POST', '/api/auth/reauth', { method: 'recovery_code', code }, jwt), 401, 'invalid_credentials');
    });

    it('reauth with only the password → 401 invalid_credentials, nothing issued; the old JWT still fails step-up', async () => {
      const user = await signup(t);
      await addTotp(t, clock, user.id);
      expectProblem(await json(t, 'POST', '/api/auth/reauth', { password: PASSWORD }, user.jwt), 401, 'invalid_credentials');
      expectStepUp(await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt));
    });

    it('a wrong code → 401 invalid_credentials and counts against the user\'s limit', async () => {
      const { user, jwt, code } = await withFactor();
      const wrong = code() === '000000' ? '111111' : '000000';
      expectProblem(await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: wrong }, jwt), 401, 'invalid_credentials');
      const [failed] = await t.services.audit.list({ userId: user.id, type: 'mfa.challenge_failed', limit: 1 });
      expect(failed?.details).toEqual({ method: 'totp', reason: 'mismatch' });
    });

    it('an API token on a listed route is unaffected (already something the user has)', async () => {
      const { jwt } = await withFactor();
      const created = (await json(t, 'POST', '/api/tokens', { name: 'ci', scopes: ['apps:write'] }, jwt)).json();
      clock.advance(WINDOW_MS + 1000);
      expect((await json(t, 'POST', '/api/apps', { name: 'From CI' }, created.token)).statusCode).toBe(201);
    });
  });

  describe('a user without a factor', () => {
    it('is unaffected on the listed routes, however old the JWT', async () => {
      const user = await signup(t);
      clock.advance(WINDOW_MS + 1000);
      expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).statusCode).toBe(201);
      expect((await json(t, 'POST', '/api/apps', { name: 'Game' }, user.jwt)).statusCode).toBe(201);
    });

    it('reauth with the password: a fresh JWT, amr ["pwd"]; a wrong password → 401', async () => {
      const user = await signup(t);
      expectProblem(await json(t, 'POST', '/api/auth/reauth', { password: 'not the password at all' }, user.jwt), 401, 'invalid_credentials');
      const res = await json(t, 'POST', '/api/auth/reauth', { password: PASSWORD }, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(decodeJwt(res.json().token)).toMatchObject({ amr: ['pwd'], auth_time: Math.floor(clock.now() / 1000) });
    });

    it('reauth is for user tokens only', async () => {
      const user = await signup(t);
      const created = (await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).json();
      expectProblem(await json(t, 'POST', '/api/auth/reauth', { password: PASSWORD }, created.token), 403, 'insufficient_scope');
    });
  });

  describe('STEP_UP_ALL_USERS=true', () => {
    it('a user without a factor needs a fresh JWT (freshness alone) on the listed routes', async () => {
      const strict = await startTestApp({ clock, env: { ...mfaEnv(), STEP_UP_ALL_USERS: 'true' } });
      try {
        const user = await signup(strict);
        expect((await json(strict, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).statusCode).toBe(201);
        clock.advance(WINDOW_MS + 1000);
        expectStepUp(await json(strict, 'POST', '/api/tokens', { name: 'ci' }, user.jwt));
        const fresh = (await json(strict, 'POST', '/api/auth/reauth', { password: PASSWORD }, user.jwt)).json().token;
        expect((await json(strict, 'POST', '/api/tokens', { name: 'ci' }, fresh)).statusCode).toBe(201);
      } finally {
        await strict.close();
      }
    });
  });
});
