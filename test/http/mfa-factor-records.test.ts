import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { json, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { refuseAuditEvents } from '../helpers/db-fault.js';
import { mfaEnv, mfaToken, verify } from '../helpers/mfa.js';
import { ceremony, creationOptions, webauthnEnv } from '../helpers/webauthn.js';
import { SoftAuthenticator } from '../helpers/webauthn-authenticator.js';

/**
 * Contract §12.8 and the audit rule of §8: a factor change and its audit event (the user's webhook
 * event and notice with it) are written in one transaction. These changes were once recorded in a
 * transaction of their own after the change, so a failure between the two left a factor added or
 * removed, or a new set of recovery codes, that the audit log, the webhook and the mail never told.
 * The database here refuses the record, and the change must not happen either.
 */
describe('second-factor changes commit with their records', () => {
  let t: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { ...mfaEnv(), ...webauthnEnv() } });
  });
  afterAll(() => t.close());

  const db = () => t.services.database.db;
  const factors = async (jwt: string) => (await json(t, 'GET', '/api/me/mfa', undefined, jwt)).json() as { factors: Array<{ id: string }>; recovery_codes_remaining: number };
  const start = async (jwt: string) => (await json(t, 'POST', '/api/me/mfa/totp', undefined, jwt)).json() as { factor_id: string; secret: string };
  const confirm = (jwt: string, id: string, secret: string) => json(t, 'POST', `/api/me/mfa/totp/${id}/confirm`, { code: totpCodeAt(secret, clock.now()), name: 'Phone' }, jwt);

  async function enrolled(): Promise<{ user: TestUser; secret: string; factorId: string; codes: string[] }> {
    const user = await signup(t);
    const started = await start(user.jwt);
    const res = await confirm(user.jwt, started.factor_id, started.secret);
    expect(res.statusCode, res.body).toBe(200);
    clock.advance(30_000);
    return { user, secret: started.secret, factorId: started.factor_id, codes: res.json().recovery_codes };
  }
  const stepped = async (user: TestUser, secret: string): Promise<string> => {
    const res = await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(secret, clock.now()));
    clock.advance(30_000);
    return res.json().token;
  };

  it('factor added without mfa.factor_added when the record failed: now neither the factor nor the first recovery codes exist', async () => {
    const user = await signup(t);
    const started = await start(user.jwt);
    const allow = await refuseAuditEvents(db(), 'mfa.factor_added');
    try {
      expect((await confirm(user.jwt, started.factor_id, started.secret)).statusCode).toBe(500);
    } finally {
      await allow();
    }
    expect(await factors(user.jwt)).toMatchObject({ factors: [], recovery_codes_remaining: 0 });
    expect(await t.services.audit.list({ userId: user.id, type: 'mfa.recovery_codes_generated', limit: 1 })).toEqual([]);
    // The pending enrolment is still there: the same code confirms it once the database takes records again.
    const res = await confirm(user.jwt, started.factor_id, started.secret);
    expect(res.statusCode, res.body).toBe(200);
    expect((await factors(user.jwt)).recovery_codes_remaining).toBe(10);
  });

  it('passkey registered without mfa.factor_added when the record failed: now it is not registered, and registers afterwards', async () => {
    const user = await signup(t);
    const auth = new SoftAuthenticator((await creationOptions(t, user.jwt)).handle);
    const register = async () => {
      const { challengeId, challenge } = await creationOptions(t, user.jwt);
      return json(t, 'POST', '/api/me/mfa/webauthn', { challenge_id: challengeId, name: 'Key', credential: auth.register(ceremony(challenge)) }, user.jwt);
    };
    const allow = await refuseAuditEvents(db(), 'mfa.factor_added');
    try {
      expect((await register()).statusCode).toBe(500);
    } finally {
      await allow();
    }
    expect(await factors(user.jwt)).toMatchObject({ factors: [], recovery_codes_remaining: 0 });
    // Not registered: the same credential is no duplicate now.
    const res = await register();
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().recovery_codes).toHaveLength(10);
  });

  it('factor removed without mfa.factor_removed when the record failed: now the factor stays and no session ends', async () => {
    const { user, secret, factorId } = await enrolled();
    const jwt = await stepped(user, secret);
    const second = await stepped(user, secret);
    const allow = await refuseAuditEvents(db(), 'mfa.factor_removed');
    try {
      expect((await json(t, 'DELETE', `/api/me/mfa/${factorId}`, undefined, jwt)).statusCode).toBe(500);
    } finally {
      await allow();
    }
    expect((await factors(jwt)).factors.map((f) => f.id)).toEqual([factorId]);
    expect((await json(t, 'GET', '/api/me', undefined, second)).statusCode).toBe(200);
    expect(await t.services.audit.list({ userId: user.id, type: 'session.revoked', limit: 1 })).toEqual([]);
  });

  it('recovery codes regenerated without mfa.recovery_codes_generated when the record failed: now the old set still works', async () => {
    const { user, secret, codes } = await enrolled();
    const jwt = await stepped(user, secret);
    const allow = await refuseAuditEvents(db(), 'mfa.recovery_codes_generated');
    try {
      expect((await json(t, 'POST', '/api/me/mfa/recovery-codes', undefined, jwt)).statusCode).toBe(500);
    } finally {
      await allow();
    }
    expect((await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', codes[0] as string)).statusCode).toBe(200);
  });
});
