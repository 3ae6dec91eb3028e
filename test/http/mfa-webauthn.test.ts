import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditType } from '../../src/audit/events.js';
import { expectProblem, json, signup } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { FLAG, SoftAuthenticator } from '../helpers/webauthn-authenticator.js';
import { ceremony, creationOptions, enrolKey, passkeyChallenge, reauthChallenge, reauthWithKey, RP_ID, webauthnEnv } from '../helpers/webauthn.js';

/** Contract §12.3, §12.5, §12.10: adding passkeys and security keys, and step-up with them. */
describe('WebAuthn factors', () => {
  let t: TestApp;
  const clock = new TestClock();
  const events = (userId: string, type: AuditType) => t.services.audit.list({ userId, type, limit: 100 });
  const register = (jwt: string, body: Record<string, unknown>) => json(t, 'POST', '/api/me/mfa/webauthn', { name: 'Key', ...body }, jwt);

  beforeAll(async () => {
    t = await startTestApp({ clock, env: webauthnEnv() });
  });
  afterAll(() => t.close());

  describe('registration', () => {
    it('offers the contract’s creation options, with a random user handle that is not the user id and stays the same', async () => {
      const user = await signup(t);
      const res = await json(t, 'POST', '/api/me/mfa/webauthn/options', {}, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      const { challenge_id: challengeId, options } = res.json();
      expect(challengeId).toMatch(/^[0-9a-f-]{36}$/);
      expect(options).toMatchObject({
        rp: { id: RP_ID },
        user: { name: user.username },
        pubKeyCredParams: [-8, -7, -257].map((alg) => ({ alg, type: 'public-key' })),
        attestation: 'none',
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
        excludeCredentials: [],
        timeout: 300_000,
      });
      expect(Buffer.from(options.challenge, 'base64url')).toHaveLength(32);
      expect(Buffer.from(options.user.id, 'base64url')).toHaveLength(32);
      expect(options.user.id).not.toContain(user.id);
      expect((await creationOptions(t, user.jwt)).handle).toBe(options.user.id);
    });

    it('registers an ES256 key: 201 with the factor, the first recovery codes, mfa.factor_added; listed without its public key', async () => {
      const user = await signup(t);
      const { factorId, recoveryCodes } = await enrolKey(t, user.jwt, { flags: FLAG.UP | FLAG.UV | FLAG.BE });
      expect(recoveryCodes).toHaveLength(10);
      const list = (await json(t, 'GET', '/api/me/mfa', undefined, user.jwt)).json();
      expect(list.factors).toEqual([{ id: factorId, type: 'webauthn', name: 'Key', created_at: expect.any(String), last_used_at: null, passkey: true, synced: true }]);
      expect(JSON.stringify(list)).not.toMatch(/public_?key/i);
      const [added] = await events(user.id, 'mfa.factor_added');
      expect(added?.details).toEqual({ method: 'webauthn', name: 'Key' });
    });

    it('registers an Ed25519 key, and the second factor comes without recovery codes after step-up by the first', async () => {
      const user = await signup(t);
      const first = await enrolKey(t, user.jwt, { alg: -8 });
      const fresh = await reauthWithKey(t, user.jwt, first.auth);
      const second = await enrolKey(t, fresh, { alg: -8 });
      expect(second.recoveryCodes).toBeUndefined();
      expect((await json(t, 'GET', '/api/me/mfa', undefined, fresh)).json().factors).toHaveLength(2);
    });

    it('a credential id registered already, to another user, is 409 conflict', async () => {
      const [alice, bob] = [await signup(t), await signup(t)];
      const { auth } = await enrolKey(t, alice.jwt);
      const { challengeId, challenge } = await creationOptions(t, bob.jwt);
      const res = await register(bob.jwt, { challenge_id: challengeId, credential: auth.register(ceremony(challenge)) });
      expect(expectProblem(res, 409, 'conflict').errors).toEqual([{ field: 'credential', message: expect.any(String) }]);
    });

    it.each([
      ['an algorithm outside EdDSA/ES256/RS256 (ES512)', (c: string) => new SoftAuthenticator(undefined, -36).register(ceremony(c))],
      ['a wrong origin', (c: string) => new SoftAuthenticator().register(ceremony(c, { origin: 'https://evil.example.net' }))],
      ['a wrong RP ID hash', (c: string) => new SoftAuthenticator().register(ceremony(c, { rpId: 'evil.example.net' }))],
      ['type webauthn.get', (c: string) => new SoftAuthenticator().register(ceremony(c, { type: 'webauthn.get' }))],
      ['the UP flag clear', (c: string) => new SoftAuthenticator().register(ceremony(c, { flags: FLAG.UV }))],
    ])('refuses %s with 400 naming credential, and the challenge is spent', async (_name, make) => {
      const user = await signup(t);
      const { challengeId, challenge } = await creationOptions(t, user.jwt);
      expect(expectProblem(await register(user.jwt, { challenge_id: challengeId, credential: make(challenge) }), 400, 'validation_failed').errors).toEqual([{ field: 'credential', message: expect.any(String) }]);
      const good = new SoftAuthenticator().register(ceremony(challenge));
      expectProblem(await register(user.jwt, { challenge_id: challengeId, credential: good }), 400, 'validation_failed');
      expect((await json(t, 'GET', '/api/me/mfa', undefined, user.jwt)).json().factors).toEqual([]);
    });

    it('a challenge works once, for its own user, for 5 minutes', async () => {
      const [alice, bob] = [await signup(t), await signup(t)];
      const mine = await creationOptions(t, alice.jwt);
      expectProblem(await register(bob.jwt, { challenge_id: mine.challengeId, credential: new SoftAuthenticator().register(ceremony(mine.challenge)) }), 400, 'validation_failed');
      // Bob's attempt spent it: Alice's own registration with it fails too.
      expectProblem(await register(alice.jwt, { challenge_id: mine.challengeId, credential: new SoftAuthenticator().register(ceremony(mine.challenge)) }), 400, 'validation_failed');
      const late = await creationOptions(t, alice.jwt);
      clock.advance(300_000);
      expectProblem(await register(alice.jwt, { challenge_id: late.challengeId, credential: new SoftAuthenticator().register(ceremony(late.challenge)) }), 400, 'validation_failed');
      expectProblem(await register(alice.jwt, { challenge_id: 'not-a-uuid\u0000', credential: new SoftAuthenticator().register(ceremony(late.challenge)) }), 400, 'validation_failed');
    });

    it('a passkey login challenge does not register a key (another purpose), and is spent by the try', async () => {
      const user = await signup(t);
      const { challengeId, challenge } = await passkeyChallenge(t);
      expectProblem(await register(user.jwt, { challenge_id: challengeId, credential: new SoftAuthenticator().register(ceremony(challenge)) }), 400, 'validation_failed');
      const stranger = new SoftAuthenticator();
      const login = await json(t, 'POST', '/api/auth/passkey/login', { challenge_id: challengeId, credential: stranger.assert(ceremony(challenge)) });
      expectProblem(login, 401, 'invalid_credentials');
    });

    it('options and registration need a recent login, also for a first factor (step-up)', async () => {
      const user = await signup(t);
      const { challengeId, challenge } = await creationOptions(t, user.jwt);
      clock.advance(901_000);
      for (const res of [await json(t, 'POST', '/api/me/mfa/webauthn/options', {}, user.jwt), await register(user.jwt, { challenge_id: challengeId, credential: new SoftAuthenticator().register(ceremony(challenge)) })]) {
        expectProblem(res, 401, 'insufficient_user_authentication');
        expect(res.headers['www-authenticate']).toBe('Bearer realm="rz", error="insufficient_user_authentication", max_age="900"');
      }
    });

    it('a 21st key is 409 conflict', async () => {
      const user = await signup(t);
      const first = await enrolKey(t, user.jwt);
      const fresh = await reauthWithKey(t, user.jwt, first.auth);
      for (let i = 1; i < 20; i += 1) await enrolKey(t, fresh);
      const { challengeId, challenge } = await creationOptions(t, fresh);
      expectProblem(await register(fresh, { challenge_id: challengeId, credential: new SoftAuthenticator().register(ceremony(challenge)) }), 409, 'conflict');
    });

    it('a body of 16 KiB + 1 is 413', async () => {
      const user = await signup(t);
      const { challengeId } = await creationOptions(t, user.jwt);
      const body = JSON.stringify({ challenge_id: challengeId, name: 'Key', credential: { pad: '' } });
      const padded = body.replace('"pad":""', `"pad":"${'a'.repeat(16 * 1024 + 1 - body.length)}"`);
      expect(Buffer.byteLength(padded)).toBe(16 * 1024 + 1);
      const res = await t.inject({ method: 'POST', url: '/api/me/mfa/webauthn', headers: { authorization: `Bearer ${user.jwt}`, 'content-type': 'application/json' }, payload: padded });
      expectProblem(res, 413, 'payload_too_large');
    });
  });

  describe('step-up by passkey (POST /api/auth/reauth)', () => {
    it('answers a fresh token with hwk and mfa added, and records auth.reauth', async () => {
      const user = await signup(t);
      const { auth } = await enrolKey(t, user.jwt);
      clock.advance(1_000_000);
      const token = await reauthWithKey(t, user.jwt, auth);
      expect(decodeJwt(token)).toMatchObject({ amr: ['pwd', 'hwk', 'mfa'], auth_time: Math.floor(clock.now() / 1000) });
      expect((await json(t, 'POST', '/api/me/mfa/webauthn/options', {}, token)).statusCode).toBe(200);
      expect((await events(user.id, 'auth.reauth'))[0]?.details).toEqual({ amr: ['pwd', 'hwk', 'mfa'] });
    });

    it('refuses a login challenge, another user’s challenge and a reused one, each counted as a failed second factor', async () => {
      const [alice, bob] = [await signup(t), await signup(t)];
      const { auth } = await enrolKey(t, alice.jwt);
      await enrolKey(t, bob.jwt);
      const bobs = await reauthChallenge(t, bob.jwt);
      const reauth = (challenge: string) => json(t, 'POST', '/api/auth/reauth', { method: 'webauthn', credential: auth.assert(ceremony(challenge)) }, alice.jwt);
      expectProblem(await reauth(bobs), 401, 'invalid_credentials');
      const once = await reauthChallenge(t, alice.jwt);
      expect((await reauth(once)).statusCode).toBe(200);
      expectProblem(await reauth(once), 401, 'invalid_credentials');
      const failed = await events(alice.id, 'mfa.challenge_failed');
      expect(failed.map((e) => e.details)).toEqual([
        { method: 'webauthn', reason: 'no_challenge' },
        { method: 'webauthn', reason: 'no_challenge' },
      ]);
    });
  });
});
