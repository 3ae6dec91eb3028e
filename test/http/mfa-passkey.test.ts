import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditType } from '../../src/audit/events.js';
import { expectProblem, json, signup, type TestUser } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { type Ceremony, FLAG, SoftAuthenticator } from '../helpers/webauthn-authenticator.js';
import { ceremony, enrolKey, passkeyChallenge, webauthnEnv } from '../helpers/webauthn.js';

/** Contract §12.4, §12.6, §12.10: login with a passkey alone. */
describe('passkey login', () => {
  let t: TestApp;
  const clock = new TestClock();
  const events = (userId: string | null, type: AuditType) => t.services.audit.list({ ...(userId === null ? {} : { userId }), type, limit: 100 });
  const login = (challengeId: string, credential: unknown, remoteAddress?: string) => json(t, 'POST', '/api/auth/passkey/login', { challenge_id: challengeId, credential }, undefined, remoteAddress);
  const withPasskey = async (flags = FLAG.UP | FLAG.UV): Promise<{ user: TestUser; auth: SoftAuthenticator }> => {
    const user = await signup(t);
    return { user, auth: (await enrolKey(t, user.jwt, { flags })).auth };
  };
  const attempt = async (auth: SoftAuthenticator, change: Partial<Ceremony> = {}) => {
    const { challengeId, challenge } = await passkeyChallenge(t);
    return login(challengeId, auth.assert(ceremony(challenge, change)));
  };
  /** An assertion by `auth` whose (unsigned) user handle names another user. */
  const foreignHandle = async (auth: SoftAuthenticator, handle: string) => {
    const { challengeId, challenge } = await passkeyChallenge(t);
    const credential = auth.assert(ceremony(challenge));
    return login(challengeId, { ...credential, response: { ...credential.response, userHandle: handle } });
  };
  /** The body of a wrong password, for comparison: the same problem, request id aside. */
  const wrongPassword = async () => {
    const user = await signup(t);
    const res = await json(t, 'POST', '/api/auth/login', { email: user.email, password: 'wrong password, long enough' });
    return { ...expectProblem(res, 401, 'invalid_credentials'), request_id: null };
  };

  beforeAll(async () => {
    t = await startTestApp({ clock, env: webauthnEnv() });
  });
  afterAll(() => t.close());

  it('offers options without allowCredentials, UV required, bound to a challenge_id', async () => {
    const res = await json(t, 'POST', '/api/auth/passkey/options', {});
    expect(res.statusCode, res.body).toBe(200);
    const { challenge_id: challengeId, options } = res.json();
    expect(challengeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(options).toMatchObject({ rpId: 'example.com', userVerification: 'required', timeout: 300_000 });
    expect(options).not.toHaveProperty('allowCredentials');
    expect(Buffer.from(options.challenge, 'base64url')).toHaveLength(32);
    // No body at all is the same request.
    expect((await t.inject({ method: 'POST', url: '/api/auth/passkey/options' })).statusCode).toBe(200);
  });

  it('logs in with amr ["hwk","user","mfa"] (swk for a synced passkey) and records login.succeeded with details.amr', async () => {
    for (const [flags, method] of [
      [FLAG.UP | FLAG.UV, 'hwk'],
      [FLAG.UP | FLAG.UV | FLAG.BE, 'swk'],
    ] as const) {
      const { user, auth } = await withPasskey(flags);
      const res = await attempt(auth);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.user.id).toBe(user.id);
      expect(decodeJwt(body.token)).toMatchObject({ sub: user.id, amr: [method, 'user', 'mfa'], auth_time: Math.floor(clock.now() / 1000) });
      expect((await events(user.id, 'login.succeeded'))[0]?.details).toEqual({ amr: [method, 'user', 'mfa'] });
      expect((await json(t, 'GET', '/api/me', undefined, body.token)).json().auth.amr).toEqual([method, 'user', 'mfa']);
    }
  });

  it('an Ed25519 passkey logs in too', async () => {
    const user = await signup(t);
    const { auth } = await enrolKey(t, user.jwt, { alg: -8 });
    expect((await attempt(auth)).statusCode).toBe(200);
  });

  it('every failure is the body of a wrong password: unknown credential, UV clear, wrong origin, wrong RP ID, webauthn.create, UP clear, foreign user handle', async () => {
    const expected = await wrongPassword();
    const { auth, user } = await withPasskey();
    const other = await withPasskey();
    const failures = [
      await attempt(new SoftAuthenticator()),
      await attempt(auth, { flags: FLAG.UP }),
      await attempt(auth, { origin: 'https://evil.example.net' }),
      await attempt(auth, { rpId: 'evil.example.net' }),
      await attempt(auth, { type: 'webauthn.create' }),
      await attempt(auth, { flags: FLAG.UV }),
      await foreignHandle(auth, other.auth.userHandle),
    ];
    for (const res of failures) expect({ ...expectProblem(res, 401, 'invalid_credentials'), request_id: null }).toEqual(expected);
    expect(await events(user.id, 'login.succeeded')).toHaveLength(0);
    // Positive control: the same passkey, unaltered.
    expect((await attempt(auth)).statusCode).toBe(200);
  });

  it('a signature over altered authenticator data is refused', async () => {
    const { auth } = await withPasskey();
    const { challengeId, challenge } = await passkeyChallenge(t);
    const altered = auth.assert(ceremony(challenge, { counter: 1 }), (data) => Buffer.concat([data.subarray(0, 33), Buffer.from([0, 0, 0, 99])]));
    expectProblem(await login(challengeId, altered), 401, 'invalid_credentials');
  });

  it('a challenge works once (also after a failure), only under its own challenge_id, for 5 minutes', async () => {
    const { auth } = await withPasskey();
    const { challengeId, challenge } = await passkeyChallenge(t);
    expectProblem(await login(challengeId, auth.assert(ceremony(challenge, { flags: FLAG.UP }))), 401, 'invalid_credentials');
    expectProblem(await login(challengeId, auth.assert(ceremony(challenge))), 401, 'invalid_credentials');
    const [a, b] = [await passkeyChallenge(t), await passkeyChallenge(t)];
    expectProblem(await login(b.challengeId, auth.assert(ceremony(a.challenge))), 401, 'invalid_credentials');
    const late = await passkeyChallenge(t);
    clock.advance(300_000);
    expectProblem(await login(late.challengeId, auth.assert(ceremony(late.challenge))), 401, 'invalid_credentials');
    expectProblem(await login('not-a-uuid\u0000', auth.assert(ceremony(late.challenge))), 401, 'invalid_credentials');
    const reasons = (await events(null, 'login.failed')).map((e) => e.details?.reason);
    expect(reasons).toContain('no_challenge');
  });

  it('of 10 parallel logins with one assertion exactly one succeeds (the challenge is taken once)', async () => {
    const { auth } = await withPasskey();
    const { challengeId, challenge } = await passkeyChallenge(t);
    const credential = auth.assert(ceremony(challenge));
    const answers = await Promise.all(Array.from({ length: 10 }, () => login(challengeId, credential)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, ...Array<number>(9).fill(401)]);
  });

  it('a counter going backwards is refused and records mfa.clone_suspected', async () => {
    const { user, auth } = await withPasskey();
    expect((await attempt(auth, { counter: 7 })).statusCode).toBe(200);
    expectProblem(await attempt(auth, { counter: 6 }), 401, 'invalid_credentials');
    expect((await events(user.id, 'mfa.clone_suspected'))[0]?.details).toMatchObject({ sign_count: 6 });
  });

  it('a 16 KiB + 1 body is 413', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/auth/passkey/login', headers: { 'content-type': 'application/json' }, payload: `{"pad":"${'a'.repeat(16 * 1024 + 1 - 10)}"}` });
    expectProblem(res, 413, 'payload_too_large');
  });
});

describe('passkey login options limit', () => {
  it('answers 20 per minute per client address, then 429 with Retry-After; another address is not affected', async () => {
    const t = await startTestApp({ env: { ...webauthnEnv(), RATE_LIMITS: 'true' } });
    try {
      const address = `198.51.100.${randomBytes(1)[0] ?? 1}`;
      for (let i = 0; i < 20; i += 1) expect((await json(t, 'POST', '/api/auth/passkey/options', {}, undefined, address)).statusCode).toBe(200);
      const refused = await json(t, 'POST', '/api/auth/passkey/options', {}, undefined, address);
      expectProblem(refused, 429, 'rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await json(t, 'POST', '/api/auth/passkey/options', {}, undefined, '203.0.113.9')).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('passkeys off (no WEBAUTHN_RP_ID or PUBLIC_URL)', () => {
  it('every WebAuthn options route answers 403 forbidden, and a passkey login is invalid_credentials', async () => {
    const t = await startTestApp();
    try {
      expect(t.config.mfa.webauthn).toBeNull();
      const user = await signup(t);
      expectProblem(await json(t, 'POST', '/api/me/mfa/webauthn/options', {}, user.jwt), 403, 'forbidden');
      expectProblem(await json(t, 'POST', '/api/auth/reauth/webauthn/options', {}, user.jwt), 403, 'forbidden');
      expectProblem(await json(t, 'POST', '/api/auth/passkey/options', {}), 403, 'forbidden');
      const credential = new SoftAuthenticator().assert(ceremony(randomBytes(32).toString('base64url')));
      expectProblem(await login(t, '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90', credential), 401, 'invalid_credentials');
    } finally {
      await t.close();
    }
  });
});

function login(t: TestApp, challengeId: string, credential: unknown) {
  return json(t, 'POST', '/api/auth/passkey/login', { challenge_id: challengeId, credential });
}
