import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/*
 * A software authenticator for unit tests (WebAuthn §6.1, §6.5, "none" attestation): it makes
 * ES256, Ed25519 or ES512 keys and signs what a browser would send, with every field open to tampering.
 * The CBOR is encoded by the library's own encoder.
 */

export const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

export interface Ceremony {
  readonly challenge: string;
  readonly origin: string;
  readonly rpId: string;
  readonly type?: string;
  readonly flags?: number;
  readonly counter?: number;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16).toString('base64url');
  private readonly privateKey: KeyObject;
  private readonly cose: Map<number, number | Uint8Array>;
  /** The digest `sign` applies: SHA-256 for ES256/ES512 (DER signatures), none for EdDSA (RFC 8032 signs the message). */
  private readonly digest: string | null;

  /** `alg` −7 (ES256, P-256), −8 (EdDSA, Ed25519) or −36 (ES512, P-521: outside the service's list). */
  constructor(
    readonly userHandle = randomBytes(32).toString('base64url'),
    alg: -7 | -8 | -36 = -7,
  ) {
    if (alg === -8) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      this.privateKey = privateKey;
      this.digest = null;
      // RFC 9053 §7.2: OKP key type 1, curve Ed25519 6, x the raw public key.
      this.cose = new Map<number, number | Uint8Array>([
        [1, 1],
        [3, -8],
        [-1, 6],
        [-2, new Uint8Array(Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url'))],
      ]);
      return;
    }
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: alg === -7 ? 'P-256' : 'P-521' });
    this.privateKey = privateKey;
    this.digest = 'sha256';
    const jwk = publicKey.export({ format: 'jwk' });
    this.cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, alg],
      [-1, alg === -7 ? 1 : 3],
      [-2, new Uint8Array(Buffer.from(jwk.x ?? '', 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y ?? '', 'base64url'))],
    ]);
  }

  private clientData(c: Ceremony, fallbackType: string): Buffer {
    return Buffer.from(JSON.stringify({ type: c.type ?? fallbackType, challenge: c.challenge, origin: c.origin, crossOrigin: false }));
  }

  /** `rk` is what the client reports for credProps; null when it reports nothing. */
  register(c: Ceremony, rk: boolean | null = true): RegistrationResponseJSON {
    const credId = Buffer.from(this.credentialId, 'base64url');
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([0, credId.length]), credId, Buffer.from(isoCBOR.encode(this.cose))]);
    const authData = Buffer.concat([sha256(c.rpId), Buffer.from([(c.flags ?? FLAG.UP | FLAG.UV) | FLAG.AT]), u32(c.counter ?? 0), attested]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      clientExtensionResults: rk === null ? {} : { credProps: { rk } },
      response: {
        clientDataJSON: this.clientData(c, 'webauthn.create').toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['usb', 'nfc'],
      },
    };
  }

  /** An assertion; `alter` changes the authenticator data after signing. */
  assert(c: Ceremony, alter?: (authData: Buffer) => Buffer): AuthenticationResponseJSON {
    const authData = Buffer.concat([sha256(c.rpId), Buffer.from([c.flags ?? FLAG.UP | FLAG.UV]), u32(c.counter ?? 0)]);
    const clientDataJSON = this.clientData(c, 'webauthn.get');
    const signature = sign(this.digest, Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: (alter ? alter(authData) : authData).toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: this.userHandle,
      },
    };
  }
}
