import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebAuthnRelyingParty } from '../../../src/account/mfa/config.js';
import { assertionOptions, registrationOptions, verifyAssertion, verifyRegistration } from '../../../src/account/mfa/webauthn-ceremonies.js';
import type { WebAuthnCredential } from '../../../src/account/mfa/webauthn-store.js';
import { FLAG, SoftAuthenticator } from '../../helpers/webauthn-authenticator.js';

const rp: WebAuthnRelyingParty = { rpId: 'example.com', rpName: 'Example', origins: ['https://auth.example.com'] };
const origin = 'https://auth.example.com';
const newChallenge = () => randomBytes(32);

/** A registered credential of `auth`, as the store returns it. */
async function registered(auth: SoftAuthenticator, counter = 0): Promise<WebAuthnCredential> {
  const challenge = newChallenge().toString('base64url');
  const verified = await verifyRegistration(rp, auth.register({ challenge, origin, rpId: rp.rpId, counter }), challenge);
  if (!verified) throw new Error('registration failed');
  return { ...verified, id: randomUUID(), userId: randomUUID(), name: 'key', createdAt: new Date(0).toISOString(), lastUsedAt: null, cloneSuspectedAt: null };
}

describe('WebAuthn registration (contract §12.3)', () => {
  it('offers the contract’s creation options', async () => {
    const handle = randomBytes(32).toString('base64url');
    const challenge = newChallenge();
    const existing = await registered(new SoftAuthenticator());
    const options = await registrationOptions(rp, { username: 'alice', handle }, [existing], challenge);
    expect(options).toMatchObject({
      rp: { id: 'example.com', name: 'Example' },
      user: { id: handle, name: 'alice' },
      challenge: challenge.toString('base64url'),
      pubKeyCredParams: [-8, -7, -257].map((alg) => ({ alg, type: 'public-key' })),
      attestation: 'none',
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      excludeCredentials: [{ id: existing.credentialId, type: 'public-key', transports: ['usb', 'nfc'] }],
      timeout: 300_000,
    });
  });

  it('verifies a registration and keeps its key, counter, flags and discoverability', async () => {
    const auth = new SoftAuthenticator();
    const challenge = newChallenge().toString('base64url');
    const result = await verifyRegistration(rp, auth.register({ challenge, origin, rpId: rp.rpId, flags: FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS, counter: 3 }), challenge);
    expect(result).toMatchObject({ credentialId: auth.credentialId, signCount: 3, transports: ['usb', 'nfc'], backupEligible: true, backupState: true, discoverable: true, userVerified: true });
    expect(result?.publicKey).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const plain = await verifyRegistration(rp, auth.register({ challenge, origin, rpId: rp.rpId, flags: FLAG.UP }, null), challenge);
    expect(plain).toMatchObject({ backupEligible: false, backupState: false, discoverable: null, userVerified: false });
  });

  it.each([
    ['a wrong origin', { origin: 'https://evil.example.net' }],
    ['a wrong RP ID hash', { rpId: 'evil.example.net' }],
    ['another challenge', { challenge: newChallenge().toString('base64url') }],
    ['type webauthn.get', { type: 'webauthn.get' }],
    ['the UP flag clear', { flags: FLAG.UV }],
  ])('refuses %s', async (_name, change) => {
    const challenge = newChallenge().toString('base64url');
    const response = new SoftAuthenticator().register({ challenge, origin, rpId: rp.rpId, ...change });
    expect(await verifyRegistration(rp, response, challenge)).toBeNull();
  });

  it('refuses an algorithm outside EdDSA, ES256, RS256 (ES512 here)', async () => {
    const challenge = newChallenge().toString('base64url');
    expect(await verifyRegistration(rp, new SoftAuthenticator(undefined, -36).register({ challenge, origin, rpId: rp.rpId }), challenge)).toBeNull();
  });

  it('refuses a malformed response as any other failure', async () => {
    const challenge = newChallenge().toString('base64url');
    const response = new SoftAuthenticator().register({ challenge, origin, rpId: rp.rpId });
    expect(await verifyRegistration(rp, { ...response, response: { ...response.response, attestationObject: 'AAAA' } }, challenge)).toBeNull();
  });
});

describe('WebAuthn assertions (contract §12.4, §12.10)', () => {
  it('offers request options: the user’s credentials, or none for passkey login', async () => {
    const credential = await registered(new SoftAuthenticator());
    const challenge = newChallenge();
    expect(await assertionOptions(rp, [credential], challenge, 'preferred')).toMatchObject({
      rpId: 'example.com',
      challenge: challenge.toString('base64url'),
      userVerification: 'preferred',
      allowCredentials: [{ id: credential.credentialId, type: 'public-key' }],
      timeout: 300_000,
    });
    const passkey = await assertionOptions(rp, null, challenge, 'required');
    expect(passkey.userVerification).toBe('required');
    expect(passkey.allowCredentials).toBeUndefined();
  });

  it('verifies an assertion and reports its counter, leaving the clone rule to the store', async () => {
    const auth = new SoftAuthenticator();
    const credential = await registered(auth, 0);
    const challenge = newChallenge().toString('base64url');
    const expectations = { challenge, credential: { ...credential, signCount: 9 }, requireUserVerification: false, userHandle: null };
    // A counter lower than the stored one still verifies here: the store flags it (mfa.clone_suspected).
    expect(await verifyAssertion(rp, auth.assert({ challenge, origin, rpId: rp.rpId, counter: 4 }), expectations)).toEqual({ signCount: 4, backupState: false, userVerified: true });
  });

  it('checks the user handle and the UV flag for passkey login', async () => {
    const auth = new SoftAuthenticator();
    const credential = await registered(auth);
    const challenge = newChallenge().toString('base64url');
    const passkey = { challenge, credential, requireUserVerification: true, userHandle: auth.userHandle };
    expect(await verifyAssertion(rp, auth.assert({ challenge, origin, rpId: rp.rpId }), passkey)).not.toBeNull();
    expect(await verifyAssertion(rp, auth.assert({ challenge, origin, rpId: rp.rpId, flags: FLAG.UP }), passkey)).toBeNull();
    expect(await verifyAssertion(rp, auth.assert({ challenge, origin, rpId: rp.rpId }), { ...passkey, userHandle: randomBytes(32).toString('base64url') })).toBeNull();
  });

  it.each([
    ['a wrong origin', { origin: 'https://evil.example.net' }],
    ['a wrong RP ID hash', { rpId: 'evil.example.net' }],
    ['another challenge', { challenge: 'b3RoZXI' }],
    ['type webauthn.create', { type: 'webauthn.create' }],
    ['the UP flag clear', { flags: FLAG.UV }],
  ])('refuses %s', async (_name, change) => {
    const auth = new SoftAuthenticator();
    const credential = await registered(auth);
    const challenge = newChallenge().toString('base64url');
    const response = auth.assert({ challenge, origin, rpId: rp.rpId, ...change });
    expect(await verifyAssertion(rp, response, { challenge, credential, requireUserVerification: false, userHandle: null })).toBeNull();
  });

  it('refuses a signature over altered authenticator data, and another credential’s assertion', async () => {
    const [auth, other] = [new SoftAuthenticator(), new SoftAuthenticator()];
    const credential = await registered(auth);
    const challenge = newChallenge().toString('base64url');
    const expectations = { challenge, credential, requireUserVerification: false, userHandle: null };
    const bumped = auth.assert({ challenge, origin, rpId: rp.rpId, counter: 1 }, (data) => Buffer.concat([data.subarray(0, 33), Buffer.from([0, 0, 0, 99])]));
    expect(await verifyAssertion(rp, bumped, expectations)).toBeNull();
    expect(await verifyAssertion(rp, other.assert({ challenge, origin, rpId: rp.rpId }), expectations)).toBeNull();
    // Another key's signature presented under this credential's id.
    expect(await verifyAssertion(rp, { ...other.assert({ challenge, origin, rpId: rp.rpId }), id: auth.credentialId, rawId: auth.credentialId }, expectations)).toBeNull();
    // Positive control: the same ceremony unaltered.
    expect(await verifyAssertion(rp, auth.assert({ challenge, origin, rpId: rp.rpId, counter: 1 }), expectations)).not.toBeNull();
  });
});
