import type { RequestBody } from '../../types/api.js';

/*
 * The browser's side of a WebAuthn ceremony (W3C WebAuthn Level 3): the server's options arrive as
 * JSON with base64url byte strings (§5.4, §5.5), and the credential goes back the same way, the
 * shape `PublicKeyCredential.toJSON()` gives (§5.1.8, §5.1.10) and the server's schema accepts
 * (src/account/mfa/webauthn-schemas.ts). A small converter rather than the newer JSON helpers:
 * every browser with WebAuthn runs it, and it sends only the members the server reads.
 */

export type RegistrationJSON = RequestBody<'registerWebAuthnFactor'>['credential'];
export type AssertionJSON = RequestBody<'logInWithPasskey'>['credential'];
/** Options as the server sends them: a JSON object still to be checked. */
type OptionsJSON = Readonly<Record<string, unknown>>;

function toBytes(text: unknown): Uint8Array<ArrayBuffer> {
  if (typeof text !== 'string') throw new TypeError('WebAuthn options: a byte string is missing');
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/').padEnd(Math.ceil(text.length / 4) * 4, '='));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toText(buffer: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

type Descriptor = { readonly id?: unknown; readonly type?: unknown; readonly transports?: unknown };
const descriptors = (list: unknown): PublicKeyCredentialDescriptor[] =>
  (Array.isArray(list) ? (list as Descriptor[]) : []).map((d) => ({
    id: toBytes(d.id),
    type: 'public-key',
    ...(Array.isArray(d.transports) ? { transports: d.transports as AuthenticatorTransport[] } : {}),
  }));

function creationOptions(json: OptionsJSON): PublicKeyCredentialCreationOptions {
  const user = json.user as { id?: unknown; name: string; displayName: string };
  return {
    ...(json as unknown as PublicKeyCredentialCreationOptions),
    challenge: toBytes(json.challenge),
    user: { ...user, id: toBytes(user.id) },
    excludeCredentials: descriptors(json.excludeCredentials),
  };
}

function requestOptions(json: OptionsJSON): PublicKeyCredentialRequestOptions {
  return { ...(json as unknown as PublicKeyCredentialRequestOptions), challenge: toBytes(json.challenge), allowCredentials: descriptors(json.allowCredentials) };
}

function attachment(credential: PublicKeyCredential): { authenticatorAttachment?: 'platform' | 'cross-platform' } {
  const value = credential.authenticatorAttachment;
  return value === 'platform' || value === 'cross-platform' ? { authenticatorAttachment: value } : {};
}

/** Only `credProps.rk` is read by the server; other extension outputs are not sent. */
function extensions(credential: PublicKeyCredential): RegistrationJSON['clientExtensionResults'] {
  const rk = credential.getClientExtensionResults().credProps?.rk;
  return rk === undefined ? {} : { credProps: { rk } };
}

/** Creates a credential (registration, §7.1) for the server's creation options. */
export async function createCredential(options: OptionsJSON): Promise<RegistrationJSON> {
  const credential = (await navigator.credentials.create({ publicKey: creationOptions(options) })) as PublicKeyCredential | null;
  if (credential === null) throw new DOMException('No credential was created.', 'NotAllowedError');
  const response = credential.response as AuthenticatorAttestationResponse;
  return {
    id: credential.id,
    rawId: toText(credential.rawId),
    type: 'public-key',
    response: { clientDataJSON: toText(response.clientDataJSON), attestationObject: toText(response.attestationObject), transports: response.getTransports() },
    clientExtensionResults: extensions(credential),
    ...attachment(credential),
  };
}

/**
 * Asks for an assertion (authentication, §7.2) for the server's request options. `conditional`
 * waits for the person to pick a passkey from the username field's autofill (§5.1.4 mediation).
 */
export async function getAssertion(options: OptionsJSON, signal?: AbortSignal, conditional = false): Promise<AssertionJSON> {
  const credential = (await navigator.credentials.get({
    publicKey: requestOptions(options),
    ...(signal === undefined ? {} : { signal }),
    ...(conditional ? { mediation: 'conditional' as CredentialMediationRequirement } : {}),
  })) as PublicKeyCredential | null;
  if (credential === null) throw new DOMException('No passkey was chosen.', 'NotAllowedError');
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: toText(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: toText(response.clientDataJSON),
      authenticatorData: toText(response.authenticatorData),
      signature: toText(response.signature),
      ...(response.userHandle === null ? {} : { userHandle: toText(response.userHandle) }),
    },
    clientExtensionResults: {},
    ...attachment(credential),
  };
}

/**
 * Whether passkeys can be used here: the server has a relying party (it marks that in the page's
 * HTML, src/web/routes.ts, so no request asks) and the browser runs WebAuthn (a secure context).
 */
export const webauthnAvailable = (): boolean =>
  document.querySelector('meta[name="rz-auth-passkeys"]')?.getAttribute('content') === 'on' &&
  window.isSecureContext &&
  typeof window.PublicKeyCredential === 'function' &&
  navigator.credentials !== undefined;

/** Whether the browser offers passkeys in the username field's autofill (conditional mediation). */
export async function conditionalAvailable(): Promise<boolean> {
  if (!webauthnAvailable() || typeof PublicKeyCredential.isConditionalMediationAvailable !== 'function') return false;
  try {
    return await PublicKeyCredential.isConditionalMediationAvailable();
  } catch {
    return false;
  }
}

/**
 * What to tell the person when the browser's ceremony failed, or null when `error` did not come
 * from the browser (then the caller shows it as any other failure). Browsers give one error for a
 * cancelled prompt, a timeout and no matching passkey, on purpose (§14.5.2): the message covers all.
 */
export function ceremonyMessage(error: unknown): string | null {
  if (!(error instanceof DOMException)) return null;
  switch (error.name) {
    case 'NotAllowedError':
    case 'AbortError':
      return 'The passkey request was cancelled or timed out, or no passkey for this site was found. Try again.';
    case 'InvalidStateError':
      return 'This passkey or security key is already added to your account.';
    case 'SecurityError':
      return 'This browser refused the passkey for this address. Open the page at the address the server is configured for.';
    default:
      return 'Your browser could not use a passkey here. Try another browser or a code instead.';
  }
}
