import type { Answer, RequestBody } from '../../types/api.js';
import { call } from './api.js';
import type { AssertionJSON } from './webauthn.js';

/*
 * Second factors as the page uses them (contract §12, docs/mfa.md): the user's authenticator apps
 * and recovery codes, the second step of a login, and step-up. Same rules as api.ts: the user token
 * travels in the Authorization header only; the `mfa_token` of a login only in a POST body.
 */

export type SecondFactors = Answer<'listSecondFactors'>;
export type SecondFactor = SecondFactors['factors'][number];
/** A started authenticator app: its secret is shown once, until it is confirmed or dropped. */
export type StartedTotp = Answer<'createTotpFactor', 201>;
export type ConfirmedTotp = Answer<'updateTotpFactorConfirmed'>;
export type SecondFactorLogin = Answer<'logInWithSecondFactor'>;
export type ReauthBody = RequestBody<'issueFreshToken'>;
/** How a person proves the second factor: a six-digit code or a recovery code. */
export type CodeMethod = 'totp' | 'recovery_code';

export const listFactors = (jwt: string) => call('get', '/api/me/mfa', jwt, {});
export const startTotp = (jwt: string) => call('post', '/api/me/mfa/totp', jwt, {});
export const confirmTotp = (jwt: string, factorId: string, code: string, name: string | null) =>
  call('post', '/api/me/mfa/totp/{factor_id}/confirm', jwt, { path: { factor_id: factorId }, body: name === null ? { code } : { code, name } });
export const renameFactor = (jwt: string, id: string, name: string) => call('patch', '/api/me/mfa/{id}', jwt, { path: { id }, body: { name } });
/** Ends every other session of the user. */
export const removeFactor = (jwt: string, id: string) => call('delete', '/api/me/mfa/{id}', jwt, { path: { id } });
/** Ten new codes; the previous set stops working. */
export const newRecoveryCodes = (jwt: string) => call('post', '/api/me/mfa/recovery-codes', jwt, {});

/** The second step of a login: redeems the `mfa_token` once. */
export const verifyLogin = (mfaToken: string, method: CodeMethod, code: string) => call('post', '/api/auth/mfa/verify', null, { body: { mfa_token: mfaToken, method, code } });
/** A new user token for the same session, authenticated now (RFC 9470 step-up). */
export const reauth = (jwt: string, body: ReauthBody) => call('post', '/api/auth/reauth', jwt, { body });

/*
 * Passkeys and security keys (WebAuthn, contract §12.3–§12.5): each ceremony starts with options
 * under a challenge that works once, and ends with the credential the browser made or signed.
 */
export type AddedPasskey = Answer<'registerWebAuthnFactor', 201>;
export const passkeyCreationOptions = (jwt: string) => call('post', '/api/me/mfa/webauthn/options', jwt, {});
export const addPasskey = (jwt: string, body: RequestBody<'registerWebAuthnFactor'>) => call('post', '/api/me/mfa/webauthn', jwt, { body });
/** Options for the second step of a login; they spend none of the `mfa_token`'s attempts. */
export const secondFactorPasskeyOptions = (mfaToken: string) => call('post', '/api/auth/mfa/webauthn/options', null, { body: { mfa_token: mfaToken } });
export const verifyLoginWithPasskey = (mfaToken: string, credential: AssertionJSON) =>
  call('post', '/api/auth/mfa/verify', null, { body: { mfa_token: mfaToken, method: 'webauthn', credential } });
export const passkeyLoginOptions = () => call('post', '/api/auth/passkey/options', null, { body: {} });
export const loginWithPasskey = (challengeId: string, credential: AssertionJSON) => call('post', '/api/auth/passkey/login', null, { body: { challenge_id: challengeId, credential } });
export const reauthPasskeyOptions = (jwt: string) => call('post', '/api/auth/reauth/webauthn/options', jwt, {});
