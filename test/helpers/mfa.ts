import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { SqlRecoveryCodeStore } from '../../src/account/mfa/recovery-code-store.js';
import { newRecoveryCodes, recoveryCodeDigests } from '../../src/account/mfa/recovery-codes.js';
import { confirmTotp } from '../../src/account/mfa/totp-check.js';
import { TotpSecrets } from '../../src/account/mfa/totp-secrets.js';
import { SqlTotpStore } from '../../src/account/mfa/totp-store.js';
import { newTotpSecret, totpCodeAt } from '../../src/account/mfa/totp.js';
import { iso } from '../../src/clock.js';
import { json } from './api.js';
import type { TestApp } from './app.js';
import type { TestClock } from './clock.js';

/** Environment for an app with authenticator apps on. */
export const mfaEnv = (): Record<string, string> => ({ MFA_ENCRYPTION_KEY: randomBytes(32).toString('base64') });

/**
 * Gives a user an active authenticator app through the stores (the enrolment routes have their own
 * tests), confirmed with the code of the clock's step: the clock is then moved one step on, so the
 * next code is a fresh one. Returns the secret and the code for now.
 */
export async function addTotp(t: TestApp, clock: TestClock, userId: string): Promise<{ secret: string; code: () => string }> {
  const deps = { store: new SqlTotpStore(t.services.database.db), secrets: new TotpSecrets(t.config.mfa.encryption) };
  const secret = newTotpSecret();
  const id = randomUUID();
  const now = clock.now();
  await deps.store.insertPending({ id, userId, name: 'Phone', sealedSecret: deps.secrets.seal(id, secret), createdAt: iso(now), pendingUntil: iso(now + 15 * 60_000) });
  expect(await confirmTotp(deps, userId, id, totpCodeAt(secret, now), null, now, 10)).toBe('confirmed');
  clock.advance(30_000);
  return { secret, code: () => totpCodeAt(secret, clock.now()) };
}

/** Gives a user a set of recovery codes through the store; returns them as shown. */
export async function addRecoveryCodes(t: TestApp, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await new SqlRecoveryCodeStore(t.services.database.db).replace(userId, recoveryCodeDigests(codes), new Date().toISOString());
  return codes;
}

/** The first step of a login for a user with a factor: the `mfa_token`. */
export async function mfaToken(t: TestApp, email: string, password: string, remoteAddress?: string): Promise<string> {
  const res = await json(t, 'POST', '/api/auth/login', { email, password }, undefined, remoteAddress);
  expect(res.statusCode, res.body).toBe(401);
  const body = res.json() as { code: string; mfa_token: string };
  expect(body.code).toBe('mfa_required');
  return body.mfa_token;
}

export const verify = (t: TestApp, token: string, method: string, code: string, remoteAddress?: string) =>
  json(t, 'POST', '/api/auth/mfa/verify', { mfa_token: token, method, code }, undefined, remoteAddress);
