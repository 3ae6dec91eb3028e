import { usageError } from './errors.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL may carry a token: HTTPS, or plain HTTP to this machine only. */
export function isSafeOrigin(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

/** Whether a URL given by the server may be opened or sent to: parseable and safe. */
export function isSafeUrl(text: string): boolean {
  try {
    return isSafeOrigin(new URL(text));
  } catch {
    return false;
  }
}

/**
 * The host as the CLI keys it everywhere (keychain service, hosts.json): the URL's origin.
 * `auth.example.com` means `https://auth.example.com`; a path, query or credentials in the URL
 * are refused rather than dropped, so the user sees that the host is not what they typed.
 */
export function normalizeHost(input: string): string {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`Not a host URL: ${input}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw usageError(`The host is an origin such as https://auth.example.com, without a path: ${input}`);
  }
  if (!isSafeOrigin(url)) throw usageError(`Tokens are sent over HTTPS only (plain HTTP to localhost is allowed): ${input}`);
  return url.origin;
}

/** An endpoint named by the server's metadata, held to the host it came from. */
export function endpointOn(host: string, value: unknown, name: string): string {
  if (typeof value !== 'string') throw new TypeError(`${name} missing`);
  const url = new URL(value);
  // A metadata document that points elsewhere would have the CLI hand its token to another
  // server; rz-auth serves all of these under PUBLIC_URL (contract §13.4).
  if (url.origin !== host) throw new TypeError(`${name} is not on ${host}`);
  return url.href;
}
