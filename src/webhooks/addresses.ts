import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { validationFailed } from '../errors.js';
import { embeddedIPv4, isIPv4, parseIp } from '../lib/ip.js';
import { decodeOnce, holdsCredential, NO_CREDENTIAL } from '../lib/text.js';
import { type Resolution, type Resolve, resolutionFor, resolveIn } from './resolution.js';

/**
 * Where webhooks may be sent. Unless private targets are allowed (WEBHOOK_ALLOW_PRIVATE), an
 * endpoint must not reach this host, its network or the cloud metadata service (SSRF): the URL is
 * checked at registration and every connection is checked again at connect time, because a name
 * can resolve differently later (DNS rebinding).
 */

/** The longest URL accepted; checked before parsing so a huge string costs nothing. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** How long registration waits for a host name to resolve. */
export const RESOLVE_TIMEOUT_MS = 3000;

/**
 * IPv4 ranges no webhook may reach, by ipaddr.js's names for the special-purpose blocks of
 * RFC 6890: this network, private (RFC 1918), carrier-grade NAT (RFC 6598), loopback, link-local
 * (cloud metadata at 169.254.169.254), multicast, broadcast, and the reserved and documentation
 * blocks (RFC 5737, RFC 2544, 240.0.0.0/4).
 */
const REFUSED_V4 = new Set(['unspecified', 'private', 'carrierGradeNat', 'loopback', 'linkLocal', 'multicast', 'broadcast', 'reserved']);
/** Azure's platform host (WireServer): reachable only from inside Azure, a metadata service. */
const AZURE_WIRESERVER = ipaddr.IPv4.parseCIDR('168.63.129.16/32');

// Only global unicast (2000::/3, RFC 4291 section 2.4) is reachable on the internet; everything
// outside it is loopback, unspecified, link-local, unique-local, multicast or reserved. Inside it:
// the IETF protocol assignments (RFC 2928: Teredo, benchmarking, ORCHID, ...) and the two
// documentation blocks (RFC 3849, RFC 9637). The forms that embed an IPv4 address are judged by
// that address first.
const GLOBAL_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const REFUSED_V6 = ['2001::/23', '2001:db8::/32', '3fff::/20'].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

const refusedV4 = (ip: ipaddr.IPv4): boolean => REFUSED_V4.has(ip.range()) || ip.match(AZURE_WIRESERVER);

/**
 * Whether a webhook must not be sent to this address: loopback, private, link-local, CGNAT,
 * unspecified, multicast, broadcast, reserved or documentation ranges, IPv4 inside IPv6 judged by
 * the IPv4 address. Anything that is not an IP address is refused.
 */
export function isRefusedAddress(ip: string): boolean {
  const address = parseIp(ip);
  if (address === null) return true;
  if (isIPv4(address)) return refusedV4(address);
  // A zone id (fe80::1%eth0) names an interface of this machine: link-local by definition.
  if (address.zoneId !== undefined) return true;
  const inner = embeddedIPv4(address);
  if (inner !== null) return refusedV4(inner);
  return !address.match(GLOBAL_V6) || REFUSED_V6.some((range) => address.match(range));
}

/** `localhost` and `*.localhost` always mean this machine (RFC 6761), whatever DNS says. */
function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The IP address a URL names literally (brackets removed), or null for a host name. */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? null : host;
}

/** The addresses of `host`, or null when it does not resolve within the timeout (waiting for a lookup slot included). */
async function resolveWithin(how: Resolution, host: string, ms: number): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  let waiting = true;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), ms);
    timer.unref();
  });
  try {
    return await Promise.race([resolveIn(how, host, () => waiting).catch(() => null), timeout]);
  } finally {
    waiting = false;
    clearTimeout(timer);
  }
}

/** A credential in the URL as typed, or behind one round of percent-encoding (`%72z_…`, `…%41…`). */
function holdsCredentialUrl(raw: string): boolean {
  const decoded = decodeOnce(raw);
  return holdsCredential(raw) || (decoded !== raw && holdsCredential(decoded));
}

const refuse = (message: string) => validationFailed([{ field: 'url', message }]);
const REFUSED_TARGET = 'must not point to a loopback, private, link-local or reserved address';
const UNRESOLVED_OR_REFUSED = 'must be a host name that resolves, only to public addresses';

export interface CheckUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE: skip the address policy (a host name must still resolve). */
  readonly allowPrivate: boolean;
  /** Injected in tests (in a lookup slot, like the system resolver); defaults to {@link resolutionFor}. */
  readonly resolve?: Resolve;
  /** The DNS servers queried for public names (tests); those of /etc/resolv.conf by default. */
  readonly dnsServers?: readonly string[];
  readonly timeoutMs?: number;
}

/**
 * Checks a URL given for a webhook endpoint and returns it parsed, or throws 400
 * validation_failed naming `url`. Order matters: the length before parsing, the form before any
 * DNS query, so a refused URL never causes a lookup it did not need.
 */
export async function checkWebhookUrl(raw: string, options: CheckUrlOptions): Promise<URL> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw refuse(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // The URL parser drops spaces and controls around a URL, and tabs and line breaks inside it: the
  // stored endpoint would not be the one the user typed, so such a URL is refused instead.
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw refuse('must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must use http or https');
  // The stored form is the serialised one, which percent-encoding can make much longer than the input.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) throw refuse(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // Node's client reads port 0 as "the default port": the URL would not say where deliveries go.
  if (url.port === '0') throw refuse('must not use port 0');
  // Credentials in a URL end up in logs and delivery listings; a receiver authenticates by signature.
  if (url.username !== '' || url.password !== '') throw refuse('must not contain a user name or password');
  // `#` cannot appear unencoded anywhere in a serialised URL except before a fragment, even an empty one.
  if (url.href.includes('#')) throw refuse('must not contain a fragment');
  // The URL is shown by the endpoint list, the CLI and the Developers page: a token or secret in
  // its path or query would be shown to all of them. Before any lookup, like the other form checks.
  if (holdsCredentialUrl(raw)) throw refuse(NO_CREDENTIAL);
  const literal = literalAddress(url);
  if (literal !== null) {
    if (!options.allowPrivate && isRefusedAddress(literal)) throw refuse(REFUSED_TARGET);
    return url;
  }
  if (!options.allowPrivate && isLocalName(url.hostname)) throw refuse(REFUSED_TARGET);
  const how = resolutionFor(options.allowPrivate, options.resolve, options.dnsServers);
  const addresses = await resolveWithin(how, url.hostname, options.timeoutMs ?? RESOLVE_TIMEOUT_MS);
  // One answer for a name that does not resolve and one that resolves inward: two would tell a user
  // which of the operator's internal names exist.
  if (addresses === null || addresses.length === 0) throw refuse(options.allowPrivate ? 'host name does not resolve' : UNRESOLVED_OR_REFUSED);
  if (!options.allowPrivate && addresses.some(isRefusedAddress)) throw refuse(UNRESOLVED_OR_REFUSED);
  return url;
}

/** The error a guarded connection fails with; its message is what a delivery attempt records. */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
  constructor(host: string) {
    super(`${host} resolves to a loopback, private, link-local or reserved address`);
    this.name = 'RefusedAddressError';
  }
}

const familyOf = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);

function wantedFamily(options: LookupOptions): 0 | 4 | 6 {
  const f = options.family;
  if (f === 4 || f === 'IPv4') return 4;
  if (f === 6 || f === 'IPv6') return 6;
  return 0;
}

/**
 * A `lookup` for node:http/https request options that resolves like dns.lookup (honouring
 * `options.all` and `options.family`) and fails with {@link RefusedAddressError} when ANY address
 * of the name is refused, so a name cannot pass registration and point inward at connect time.
 * Node does not call `lookup` for an IP literal: check those with {@link isRefusedAddress} first.
 * `wanted` tells a lookup still waiting for its slot whether its caller is still there: one whose
 * attempt has timed out meanwhile never starts, so abandoned attempts cannot queue ahead of others.
 */
export function guardedLookup(allowPrivate: boolean, how: Resolution, wanted?: () => boolean): LookupFunction {
  const lookupAll = async (host: string, options: LookupOptions): Promise<LookupAddress[]> => {
    const family = wantedFamily(options);
    const resolved = isIP(host) === 0 ? await resolveIn(how, host, wanted) : [host];
    const all = resolved.map((address) => ({ address, family: familyOf(address) }));
    return all.filter((a) => family === 0 || a.family === family);
  };
  return (host, options, callback) => {
    // Refused by its name alone: no query for it (DNS has no answer for localhost anyway).
    if (!allowPrivate && isLocalName(host)) return callback(new RefusedAddressError(host), []);
    lookupAll(host, options).then(
      (addresses) => {
        if (!allowPrivate && (isLocalName(host) || addresses.some((a) => isRefusedAddress(a.address)))) {
          callback(new RefusedAddressError(host), []);
        } else if (options.all) {
          callback(null, addresses);
        } else if (addresses[0]) {
          callback(null, addresses[0].address, addresses[0].family);
        } else {
          callback(Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }), []);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}
