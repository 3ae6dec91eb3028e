import type { AuthenticatorTransportFuture, RegistrationResponseJSON } from '@simplewebauthn/server';
import { type Static, Type } from 'typebox';

/*
 * WebAuthn on the wire (W3C WebAuthn Level 3 §5.1.8, §5.1.10 `toJSON()`): base64url strings, as
 * browsers and @simplewebauthn/browser send them. The options are the library's JSON forms.
 */

const base64url = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$', description });

/** A credential id is at most 1023 bytes (WebAuthn §5.8.3): 1364 base64url characters. */
const CredentialId = base64url(1364, 'The credential id, base64url.');

const Transports = Type.Array(Type.String({ maxLength: 32, pattern: '^[a-z-]+$' }), { maxItems: 10, description: 'Ways the client can reach the authenticator; unknown ones are ignored.' });

const ExtensionResults = Type.Object(
  { credProps: Type.Optional(Type.Object({ rk: Type.Optional(Type.Boolean()) }, { additionalProperties: false })) },
  { additionalProperties: true, description: 'Client extension outputs; only `credProps.rk` (discoverable) is read.' },
);

const Attachment = Type.Optional(Type.Enum(['platform', 'cross-platform']));

/** The answer of `navigator.credentials.create()` (registration, "none" attestation or any other: only "none" is kept). */
export const RegistrationCredential = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: base64url(4096, 'The client data, base64url.'),
        attestationObject: base64url(12_000, 'The CBOR attestation object, base64url.'),
        authenticatorData: Type.Optional(base64url(12_000, 'The authenticator data again (ignored: read from the attestation object).')),
        publicKey: Type.Optional(base64url(4096, 'The public key as SPKI (ignored: read from the attestation object).')),
        publicKeyAlgorithm: Type.Optional(Type.Integer({ format: 'int32', minimum: -65_536, maximum: 65_535 })),
        transports: Type.Optional(Transports),
      },
      { additionalProperties: false },
    ),
    clientExtensionResults: ExtensionResults,
    authenticatorAttachment: Attachment,
  },
  { additionalProperties: false, description: 'A `PublicKeyCredential` from `navigator.credentials.create()`, as its `toJSON()` gives it.' },
);

/** The answer of `navigator.credentials.get()` (an assertion). */
export const AssertionCredential = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: base64url(4096, 'The client data, base64url.'),
        authenticatorData: base64url(4096, 'The authenticator data, base64url.'),
        signature: base64url(1024, 'The signature, base64url.'),
        userHandle: Type.Optional(Type.String({ maxLength: 86, pattern: '^[A-Za-z0-9_-]*$', description: 'The user handle (passkey login), base64url.' })),
      },
      { additionalProperties: false },
    ),
    clientExtensionResults: ExtensionResults,
    authenticatorAttachment: Attachment,
  },
  { additionalProperties: false, description: 'A `PublicKeyCredential` from `navigator.credentials.get()`, as its `toJSON()` gives it.' },
);

const KNOWN_TRANSPORTS: ReadonlySet<string> = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const isTransport = (t: string): t is AuthenticatorTransportFuture => KNOWN_TRANSPORTS.has(t);

/** The library's registration response from the validated body: unknown transports dropped. */
export function registrationResponse(body: Static<typeof RegistrationCredential>): RegistrationResponseJSON {
  const { transports, ...response } = body.response;
  return { ...body, response: { ...response, transports: (transports ?? []).filter(isTransport) } };
}

/** Creation or request options: the library's JSON, documented as an object (WebAuthn §5.4, §5.5). */
export const CreationOptions = Type.Object(
  {},
  { additionalProperties: true, description: '`PublicKeyCredentialCreationOptionsJSON` for `PublicKeyCredential.parseCreationOptionsFromJSON()`.' },
);
export const RequestOptions = Type.Object(
  {},
  { additionalProperties: true, description: '`PublicKeyCredentialRequestOptionsJSON` for `PublicKeyCredential.parseRequestOptionsFromJSON()`.' },
);
