import { expect } from 'vitest';
import { json } from './api.js';
import type { TestApp } from './app.js';
import { type Ceremony, FLAG, SoftAuthenticator } from './webauthn-authenticator.js';

/** The relying party the WebAuthn HTTP tests run under. */
export const RP_ID = 'example.com';
export const ORIGIN = 'https://auth.example.com';

/** Environment for an app with passkeys on. */
export const webauthnEnv = (): Record<string, string> => ({ WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_ORIGINS: ORIGIN });

export interface Enrolment {
  readonly auth: SoftAuthenticator;
  readonly factorId: string;
  readonly recoveryCodes: string[] | undefined;
}

export interface EnrolOptions {
  readonly alg?: -7 | -8 | -36;
  readonly flags?: number;
  readonly counter?: number;
}

/** Creation options for the user of `jwt`: the challenge id, the challenge and the user handle. */
export async function creationOptions(t: TestApp, jwt: string): Promise<{ challengeId: string; challenge: string; handle: string }> {
  const res = await json(t, 'POST', '/api/me/mfa/webauthn/options', {}, jwt);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { challenge_id: string; options: { challenge: string; user: { id: string } } };
  return { challengeId: body.challenge_id, challenge: body.options.challenge, handle: body.options.user.id };
}

/** Registers a new software authenticator for the user of `jwt` through the API. */
export async function enrolKey(t: TestApp, jwt: string, options: EnrolOptions = {}): Promise<Enrolment> {
  const { challengeId, challenge, handle } = await creationOptions(t, jwt);
  const auth = new SoftAuthenticator(handle, options.alg ?? -7);
  const credential = auth.register({ challenge, origin: ORIGIN, rpId: RP_ID, flags: options.flags ?? FLAG.UP | FLAG.UV, counter: options.counter ?? 0 });
  const res = await json(t, 'POST', '/api/me/mfa/webauthn', { challenge_id: challengeId, name: 'Key', credential }, jwt);
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json() as { factor: { id: string }; recovery_codes?: string[] };
  return { auth, factorId: body.factor.id, recoveryCodes: body.recovery_codes };
}

/** The challenge of request options answered by `res`. */
export function challengeOf(res: { statusCode: number; body: string; json: () => unknown }): string {
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { options: { challenge: string } }).options.challenge;
}

/** A ceremony of the test relying party with `challenge`, changed by `change`. */
export const ceremony = (challenge: string, change: Partial<Ceremony> = {}): Ceremony => ({ challenge, origin: ORIGIN, rpId: RP_ID, ...change });

/** Options for the second step of a login with `mfaToken`: the challenge. */
export async function secondFactorChallenge(t: TestApp, mfaToken: string): Promise<string> {
  return challengeOf(await json(t, 'POST', '/api/auth/mfa/webauthn/options', { mfa_token: mfaToken }));
}

/** Passkey login options: the challenge id and challenge. */
export async function passkeyChallenge(t: TestApp, remoteAddress?: string): Promise<{ challengeId: string; challenge: string }> {
  const res = await json(t, 'POST', '/api/auth/passkey/options', {}, undefined, remoteAddress);
  const challenge = challengeOf(res);
  return { challengeId: (res.json() as { challenge_id: string }).challenge_id, challenge };
}

/** Step-up options for the session of `jwt`: the challenge. */
export async function reauthChallenge(t: TestApp, jwt: string): Promise<string> {
  return challengeOf(await json(t, 'POST', '/api/auth/reauth/webauthn/options', {}, jwt));
}

/** A fresh JWT for the session of `jwt`, proven with `auth` (step-up by passkey). */
export async function reauthWithKey(t: TestApp, jwt: string, auth: SoftAuthenticator, counter = 0): Promise<string> {
  const credential = auth.assert(ceremony(await reauthChallenge(t, jwt), { counter }));
  const res = await json(t, 'POST', '/api/auth/reauth', { method: 'webauthn', credential }, jwt);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { token: string }).token;
}
