import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { type TestUser, createApiToken, json, signup } from '../../../test/helpers/api.js';
import { type TestApp, startTestApp } from '../../../test/helpers/app.js';
import { TestClock } from '../../../test/helpers/clock.js';
import { addTotp, mfaEnv, mfaToken, verify as verifySecondFactor } from '../../../test/helpers/mfa.js';
import { createService } from '../../../test/helpers/platform.js';
import type { Verifier } from '../src/index.js';
import { verifierOf } from './rz-auth.js';

/**
 * How far behind this host's clock rz-auth runs: every token it issues has an `auth_time` that old
 * to the verifier, which reads this host's clock, so an old login needs no sleeping. Well inside
 * the JWT's lifetime (JWT_TTL_SECONDS, an hour by default).
 */
export const LAG_S = 600;

/** An in-process rz-auth with authenticator apps on, listening on loopback, and the logins the step-up tests need. */
export interface MfaRzAuth {
  readonly t: TestApp;
  readonly clock: TestClock;
  readonly verifier: Verifier;
  /** A user with an authenticator app. */
  readonly user: TestUser;
  /** That user's JWT from signup, before the factor: `amr` ["pwd"], `auth_time` LAG_S old. */
  readonly passwordOnly: string;
  /** That user's JWT from password + TOTP: `amr` ["pwd","otp","mfa"], `auth_time` LAG_S old. */
  readonly withTotp: string;
  /** An API token of another user (no factor, so no step-up to create it). */
  readonly apiToken: string;
  /**
   * Brings rz-auth's clock to this host's and re-authenticates with TOTP, once (a code is good once
   * per step): a JWT with `auth_time` now, the same one on every call.
   */
  freshTotp(): Promise<string>;
}

export function mfaRzAuth(): MfaRzAuth {
  const shared = {} as { -readonly [K in keyof MfaRzAuth]: MfaRzAuth[K] };
  beforeAll(async () => {
    const clock = new TestClock(Date.now() - LAG_S * 1000);
    const t = await startTestApp({ clock, env: mfaEnv() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const user = await signup(t);
    const totp = await addTotp(t, clock, user.id);
    const verified = await verifySecondFactor(t, await mfaToken(t, user.email, user.password), 'totp', totp.code());
    expect(verified.statusCode, verified.body).toBe(200);
    const other = await signup(t);
    let fresh: Promise<string> | undefined;
    const reauth = async () => {
      // To this host's time, never past it: a JWT issued "in the future" is refused (its iat).
      clock.advance(Date.now() - clock.now());
      const res = await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: totp.code() }, shared.withTotp);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { token: string }).token;
    };
    Object.assign(shared, {
      t,
      clock,
      verifier: (await verifierOf({ url }, (await createService(t)).token)).verifier,
      user,
      passwordOnly: user.jwt,
      withTotp: (verified.json() as { token: string }).token,
      apiToken: (await createApiToken(t, other.jwt)).token,
      freshTotp: () => (fresh ??= reauth()),
    });
  }, 60_000);
  afterAll(async () => {
    await shared.verifier?.close();
    await shared.t?.close();
  });
  return shared;
}
