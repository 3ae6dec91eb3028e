import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../../src/account/mfa/totp.js';
import { request } from '../../../test/helpers/server-process.js';
import { type Verifier, VerifyError } from '../src/index.js';
import { PASSWORD, type RzAuth, serviceToken, signup, startRzAuth, verifierOf } from './rz-auth.js';

/**
 * Contract §12.7: with MFA_REQUIRED and no grace, rz-auth hands a user without a second factor a
 * JWT whose `aud` is `rz-auth:enroll`. Signed by the same keys, it must still be refused by every
 * platform service: the verifier accepts only its own audience (JWT_AUDIENCE).
 */
describe('a JWT with the enrolment audience at a platform service', () => {
  let rz: RzAuth;
  let verifier: Verifier;
  beforeAll(async () => {
    rz = await startRzAuth({ MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '0', MFA_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    verifier = (await verifierOf(rz, await serviceToken(rz.env))).verifier;
  }, 60_000);
  afterAll(async () => {
    await verifier.close();
    await rz.stop();
  });

  it('is refused 401 invalid_token; the same user once enrolled, with a full login, is accepted', async () => {
    const account = await signup(rz.url);
    const error = await verifier.verify(`Bearer ${account.jwt}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerifyError);
    expect((error as VerifyError).status).toBe(401);
    expect((error as VerifyError).code).toBe('invalid_token');

    // Positive control: enrolled, and logged in with a recovery code, the user's token passes.
    const started = (await request(rz.url, 'POST', '/api/me/mfa/totp', { token: account.jwt })).body as { factor_id: string; secret: string };
    const confirmed = await request(rz.url, 'POST', `/api/me/mfa/totp/${started.factor_id}/confirm`, { token: account.jwt, body: { code: totpCodeAt(started.secret, Date.now()) } });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const codes = (confirmed.body as { recovery_codes: string[] }).recovery_codes;
    const first = (await request(rz.url, 'POST', '/api/auth/login', { body: { email: account.email, password: PASSWORD } })).body as { mfa_token: string };
    const full = await request(rz.url, 'POST', '/api/auth/mfa/verify', { body: { mfa_token: first.mfa_token, method: 'recovery_code', code: codes[0] } });
    expect(full.status, JSON.stringify(full.body)).toBe(200);
    expect(await verifier.verify(`Bearer ${(full.body as { token: string }).token}`)).toMatchObject({ userId: account.userId, tokenType: 'user' });
  });
});
