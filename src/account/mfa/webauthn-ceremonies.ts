import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { WebAuthnRelyingParty } from './config.js';
import type { NewWebAuthnCredential, WebAuthnCredential } from './webauthn-store.js';

/*
 * WebAuthn ceremonies (contract §12.3, §12.4) with @simplewebauthn/server: it parses CBOR and
 * authenticator data, checks type, challenge, origin, RP ID hash, flags and the signature. This
 * file only sets the contract's parameters and maps results; the counter rule is the store's
 * compare-and-set (webauthn-store.ts), so the library is handed a counter of 0 and never refuses
 * on it: a clone must be flagged and audited, not merely refused.
 */

/** EdDSA (−8), ES256 (−7), RS256 (−257): anything else is refused at registration. */
export const ALGORITHMS = [-8, -7, -257];
const TIMEOUT_MS = 300_000;
const TRANSPORTS = new Set<string>(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

const descriptor = (c: WebAuthnCredential) => ({
  id: c.credentialId,
  transports: c.transports.filter((t): t is AuthenticatorTransportFuture => TRANSPORTS.has(t)),
});

/** Creation options: `handle` is the user's random 32-byte WebAuthn handle (base64url), never the user id. */
export function registrationOptions(
  rp: WebAuthnRelyingParty,
  user: { readonly username: string; readonly handle: string },
  existing: readonly WebAuthnCredential[],
  challenge: Uint8Array,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpId,
    userName: user.username,
    userID: new Uint8Array(Buffer.from(user.handle, 'base64url')),
    challenge: new Uint8Array(challenge),
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptor),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

/** What a verified registration gives the store. */
export type VerifiedRegistration = Pick<NewWebAuthnCredential, 'credentialId' | 'publicKey' | 'signCount' | 'transports' | 'backupEligible' | 'backupState' | 'discoverable' | 'userVerified'>;

/** The credential of a valid registration for `expectedChallenge` (base64url), or null for any failure. */
export async function verifyRegistration(rp: WebAuthnRelyingParty, response: RegistrationResponseJSON, expectedChallenge: string): Promise<VerifiedRegistration | null> {
  try {
    const { verified, registrationInfo: info } = await verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      expectedType: 'webauthn.create',
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!verified) return null;
    const rk = response.clientExtensionResults.credProps?.rk;
    return {
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      signCount: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => TRANSPORTS.has(t)),
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backupState: info.credentialBackedUp,
      discoverable: typeof rk === 'boolean' ? rk : null,
      userVerified: info.userVerified,
    };
  } catch {
    // Every malformed or failing response is the same refusal to the client (contract §12.3).
    return null;
  }
}

/**
 * Request options: `allow` lists the user's credentials for a second factor or step-up; null for
 * passkey login, where the authenticator offers its discoverable credentials.
 */
export function assertionOptions(rp: WebAuthnRelyingParty, allow: readonly WebAuthnCredential[] | null, challenge: Uint8Array, userVerification: 'preferred' | 'required'): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    challenge: new Uint8Array(challenge),
    timeout: TIMEOUT_MS,
    userVerification,
    ...(allow === null ? {} : { allowCredentials: allow.map(descriptor) }),
  });
}

/** What a verified assertion tells the store. */
export interface VerifiedAssertion {
  readonly signCount: number;
  readonly backupState: boolean;
  readonly userVerified: boolean;
}

export interface AssertionExpectations {
  readonly challenge: string;
  readonly credential: WebAuthnCredential;
  /** Passkey login: the UV flag must be set (contract §12.4). */
  readonly requireUserVerification: boolean;
  /** Passkey login: the returned user handle must be the credential owner's. */
  readonly userHandle: string | null;
}

/** Verifies an assertion by `expect.credential`, or null for any failure. The counter is left to the store. */
export async function verifyAssertion(rp: WebAuthnRelyingParty, response: AuthenticationResponseJSON, expect: AssertionExpectations): Promise<VerifiedAssertion | null> {
  const { credential } = expect;
  if (response.id !== credential.credentialId) return null;
  if (expect.userHandle !== null && response.response.userHandle !== expect.userHandle) return null;
  try {
    const { verified, authenticationInfo: info } = await verifyAuthenticationResponse({
      response,
      expectedChallenge: expect.challenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      expectedType: 'webauthn.get',
      requireUserVerification: expect.requireUserVerification,
      credential: { id: credential.credentialId, publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')), counter: 0 },
    });
    if (!verified) return null;
    return { signCount: info.newCounter, backupState: info.credentialBackedUp, userVerified: info.userVerified };
  } catch {
    return null;
  }
}
