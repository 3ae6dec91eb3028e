import { ConfigError, type Env, raw } from './env-vars.js';
import { parseIp } from './ip.js';

const LOOPBACK_NAMES = new Set(['localhost']);

/** A loopback host name or address: where plain http and an unencrypted relay stay on the machine. */
export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_NAMES.has(hostname.toLowerCase())) return true;
  const address = parseIp(hostname.replace(/^\[(.*)\]$/, '$1'));
  return address !== null && address.range() === 'loopback';
}

/**
 * PUBLIC_URL, the origin of every link a mail carries and the default relying party of passkeys:
 * https (http for a loopback host only), no credentials, query or fragment; a path is a prefix and
 * ends with a slash. Null when unset. Parsed once for every user of it, so one value means one thing.
 */
export function publicUrlFrom(env: Env): URL | null {
  const value = raw(env, 'PUBLIC_URL');
  if (value === undefined) return null;
  const url = URL.canParse(value) ? new URL(value) : null;
  const secure = url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!url || !secure || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`PUBLIC_URL must be an https:// URL without query or fragment (http:// for a loopback host only), got "${value.slice(0, 100)}"`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
