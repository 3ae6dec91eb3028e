import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditType } from '../../src/audit/events.js';
import { expectProblem, json, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { mfaToken } from '../helpers/mfa.js';
import { type Ceremony, FLAG, type SoftAuthenticator } from '../helpers/webauthn-authenticator.js';
import { ceremony, enrolKey, passkeyChallenge, reauthChallenge, secondFactorChallenge, webauthnEnv } from '../helpers/webauthn.js';

/** Contract §12.4, §12.6, §12.10: the second step of a login with a passkey or security key. */
describe('login with a WebAuthn second factor', () => {
  let t: TestApp;
  const clock = new TestClock();
  const events = (userId: string, type: AuditType) => t.services.audit.list({ userId, type, limit: 100 });
  const verify = (token: string, credential: unknown) => json(t, 'POST', '/api/auth/mfa/verify', { mfa_token: token, method: 'webauthn', credential });
  const withKey = async (flags?: number): Promise<{ user: TestUser; auth: SoftAuthenticator }> => {
    const user = await signup(t);
    return { user, auth: (await enrolKey(t, user.jwt, flags === undefined ? {} : { flags })).auth };
  };
  /** A fresh mfa_token and an assertion by `auth` over its challenge, changed by `change`. */
  const attempt = async (user: TestUser, auth: SoftAuthenticator, change: Partial<Ceremony> = {}) => {
    const token = await mfaToken(t, user.email, PASSWORD);
    return { token, credential: auth.assert(ceremony(await secondFactorChallenge(t, token), change)) };
  };

  beforeAll(async () => {
    t = await startTestApp({ clock, env: webauthnEnv() });
  });
  afterAll(() => t.close());

  it('mfa_required names webauthn; the options list the user’s credential with UV preferred', async () => {
    const { user, auth } = await withKey();
    const res = await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD });
    expect(expectProblem(res, 401, 'mfa_required').methods).toEqual(['webauthn', 'recovery_code']);
    const token = await mfaToken(t, user.email, PASSWORD);
    const options = (await json(t, 'POST', '/api/auth/mfa/webauthn/options', { mfa_token: token })).json().options;
    expect(options).toMatchObject({ rpId: 'example.com', userVerification: 'preferred', allowCredentials: [{ id: auth.credentialId, type: 'public-key' }] });
  });

  it('a security key logs in with amr ["pwd","hwk","mfa"]; a backup-eligible one with swk; login.succeeded has details.amr', async () => {
    for (const [flags, method] of [
      [FLAG.UP | FLAG.UV, 'hwk'],
      [FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS, 'swk'],
    ] as const) {
      const { user, auth } = await withKey(flags);
      const { token, credential } = await attempt(user, auth);
      const res = await verify(token, credential);
      expect(res.statusCode, res.body).toBe(200);
      expect(decodeJwt(res.json().token).amr).toEqual(['pwd', method, 'mfa']);
      expect((await events(user.id, 'login.succeeded'))[0]?.details).toEqual({ amr: ['pwd', method, 'mfa'] });
      // The mfa_token was single-use.
      expectProblem(await verify(token, credential), 401, 'invalid_credentials');
    }
  });

  it('an invalid mfa_token gets no options: 401 invalid_credentials', async () => {
    expectProblem(await json(t, 'POST', '/api/auth/mfa/webauthn/options', { mfa_token: 'A'.repeat(43) }), 401, 'invalid_credentials');
    expectProblem(await json(t, 'POST', '/api/auth/mfa/webauthn/options', { mfa_token: 'short\u0000' }), 401, 'invalid_credentials');
  });

  it.each([
    ['a wrong origin', { origin: 'https://evil.example.net' }],
    ['a wrong RP ID hash', { rpId: 'evil.example.net' }],
    ['type webauthn.create in an assertion', { type: 'webauthn.create' }],
    ['the UP flag clear', { flags: FLAG.UV }],
  ])('refuses %s: 401 invalid_credentials, mfa.challenge_failed; a correct assertion still works after', async (_name, change) => {
    const { user, auth } = await withKey();
    const bad = await attempt(user, auth, change);
    expectProblem(await verify(bad.token, bad.credential), 401, 'invalid_credentials');
    expect((await events(user.id, 'mfa.challenge_failed'))[0]?.details).toEqual({ method: 'webauthn', reason: 'invalid' });
    const good = await attempt(user, auth);
    expect((await verify(good.token, good.credential)).statusCode).toBe(200);
  });

  it('refuses a signature over altered authenticator data', async () => {
    const { user, auth } = await withKey();
    const token = await mfaToken(t, user.email, PASSWORD);
    const challenge = await secondFactorChallenge(t, token);
    const altered = auth.assert(ceremony(challenge, { counter: 1 }), (data) => Buffer.concat([data.subarray(0, 33), Buffer.from([0, 0, 0, 99])]));
    expectProblem(await verify(token, altered), 401, 'invalid_credentials');
  });

  it('a challenge works once, only for its user and purpose, and for 5 minutes', async () => {
    const [{ user, auth }, other] = [await withKey(), await withKey()];
    const first = await attempt(user, auth);
    expect((await verify(first.token, first.credential)).statusCode).toBe(200);
    // Reused: the same assertion with a new mfa_token.
    const token = await mfaToken(t, user.email, PASSWORD);
    expectProblem(await verify(token, first.credential), 401, 'invalid_credentials');
    // Another user's login challenge, and this user's step-up challenge.
    const othersToken = await mfaToken(t, other.user.email, PASSWORD);
    expectProblem(await verify(token, auth.assert(ceremony(await secondFactorChallenge(t, othersToken)))), 401, 'invalid_credentials');
    expectProblem(await verify(token, auth.assert(ceremony(await reauthChallenge(t, user.jwt)))), 401, 'invalid_credentials');
    const late = await attempt(user, auth);
    clock.advance(300_000);
    expectProblem(await verify(late.token, late.credential), 401, 'invalid_credentials');
    const reasons = (await events(user.id, 'mfa.challenge_failed')).map((e) => e.details?.reason);
    expect(reasons.filter((r) => r === 'no_challenge')).toHaveLength(3);
  });

  it('another user’s credential on the 2FA path is refused, though its assertion is valid', async () => {
    const [alice, bob] = [await withKey(), await withKey()];
    const token = await mfaToken(t, alice.user.email, PASSWORD);
    const res = await verify(token, bob.auth.assert(ceremony(await secondFactorChallenge(t, token))));
    expectProblem(res, 401, 'invalid_credentials');
    expect((await events(alice.user.id, 'mfa.challenge_failed'))[0]?.details).toEqual({ method: 'webauthn', reason: 'other_user' });
  });

  it('a counter going backwards is refused, flags the factor and records mfa.clone_suspected; two zeros are accepted', async () => {
    const { user, auth } = await withKey();
    for (const counter of [0, 0, 5]) {
      const ok = await attempt(user, auth, { counter });
      expect((await verify(ok.token, ok.credential)).statusCode, `counter ${counter}`).toBe(200);
    }
    const back = await attempt(user, auth, { counter: 3 });
    expectProblem(await verify(back.token, back.credential), 401, 'invalid_credentials');
    const [suspected] = await events(user.id, 'mfa.clone_suspected');
    expect(suspected?.details).toMatchObject({ sign_count: 3, name: 'Key' });
    const row = await t.services.database.db.selectFrom('mfa_factors').select('clone_suspected_at').where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.clone_suspected_at).not.toBeNull();
    const same = await attempt(user, auth, { counter: 5 });
    expectProblem(await verify(same.token, same.credential), 401, 'invalid_credentials');
  });

  it('WebAuthn failures count toward the per-user limit: the 11th attempt is 429 even with a valid assertion', async () => {
    const { user, auth } = await withKey();
    for (let i = 0; i < 10; i += 1) {
      const bad = await attempt(user, auth, { origin: 'https://evil.example.net' });
      expectProblem(await verify(bad.token, bad.credential), 401, 'invalid_credentials');
    }
    const good = await attempt(user, auth);
    expectProblem(await verify(good.token, good.credential), 429, 'rate_limited');
    expect(await events(user.id, 'mfa.locked')).toHaveLength(1);
  });

  it('passkey login challenges are not second-factor challenges', async () => {
    const { user, auth } = await withKey();
    const token = await mfaToken(t, user.email, PASSWORD);
    const { challenge } = await passkeyChallenge(t);
    expectProblem(await verify(token, auth.assert(ceremony(challenge))), 401, 'invalid_credentials');
  });
});
