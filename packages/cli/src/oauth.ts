import { CliError, deniedError } from './errors.js';
import { endpointOn } from './host.js';
import type { Http, Reply } from './http.js';

/** The built-in public client of contract §13.3. */
export const CLIENT_ID = 'rz-cli';
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface Metadata {
  device_authorization_endpoint?: string;
  token_endpoint?: string;
  revocation_endpoint?: string;
}

/** RFC 8414: the document at /.well-known/oauth-authorization-server, its issuer checked. */
export async function readMetadata(http: Http, host: string, signal?: AbortSignal): Promise<Metadata> {
  const reply = await http.send({ method: 'GET', url: `${host}/.well-known/oauth-authorization-server` }, signal);
  if (reply.status !== 200) throw new CliError(`${host} did not serve its OAuth metadata (HTTP ${reply.status}); is it an rz-auth server?`);
  // RFC 8414 §3.3: the issuer must be the identifier the well-known URL was built from.
  if (typeof reply.body.issuer !== 'string' || reply.body.issuer.replace(/\/$/, '') !== host) {
    throw new CliError(`The metadata of ${host} names another issuer; refusing to continue`);
  }
  const metadata: Metadata = {};
  for (const name of ['device_authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const) {
    if (reply.body[name] === undefined) continue;
    try {
      metadata[name] = endpointOn(host, reply.body[name], name);
    } catch (err) {
      throw new CliError(`The metadata of ${host} is not usable: ${(err as Error).message}`);
    }
  }
  return metadata;
}

export interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval: number;
}

/** RFC 8628 §3.1–3.2. */
export async function requestDeviceCode(http: Http, metadata: Metadata, scopes: string[], deviceName: string, signal: AbortSignal): Promise<DeviceCode> {
  if (metadata.device_authorization_endpoint === undefined) throw new CliError('This server does not offer device login (DEVICE_FLOW_ENABLED is off)');
  const form: Record<string, string> = { client_id: CLIENT_ID, device_name: deviceName };
  if (scopes.length > 0) form.scope = scopes.join(' ');
  const reply = await http.send({ method: 'POST', url: metadata.device_authorization_endpoint, form }, signal);
  if (reply.status !== 200) throw oauthError(reply, 'The device code request was refused');
  const b = reply.body;
  if (typeof b.device_code !== 'string' || typeof b.user_code !== 'string' || typeof b.verification_uri !== 'string' || typeof b.expires_in !== 'number') {
    throw new CliError('The server answered the device code request with an unexpected body');
  }
  return {
    device_code: b.device_code,
    user_code: b.user_code,
    verification_uri: b.verification_uri,
    ...(typeof b.verification_uri_complete === 'string' ? { verification_uri_complete: b.verification_uri_complete } : {}),
    expires_in: b.expires_in,
    // RFC 8628 §3.2: 5 seconds when the server gives none.
    interval: typeof b.interval === 'number' && b.interval > 0 ? b.interval : 5,
  };
}

/** An RFC 6749 §5.2 error answer as a CliError; refusals of the user's authority exit 3. */
export function oauthError(reply: Reply, what: string): CliError {
  const code = typeof reply.body.error === 'string' ? reply.body.error : `HTTP ${reply.status}`;
  const description = typeof reply.body.error_description === 'string' ? `: ${reply.body.error_description}` : '';
  const message = `${what} (${code}${description})`;
  return ['access_denied', 'expired_token', 'invalid_grant', 'invalid_client', 'invalid_scope', 'unauthorized_client'].includes(code)
    ? deniedError(message)
    : new CliError(message);
}
