import { lookup as dnsLookup } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { inLookupSlot } from './lookup-slots.js';

/** Resolves a host name to all its addresses (IPv4 and IPv6 text). */
export type Resolve = (host: string) => Promise<string[]>;

const systemResolve: Resolve = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => a.address));
    });
  });

/** Per try, and tries, of a DNS query: a server that never answers costs about 4 s at most. */
const QUERY_TIMEOUT_MS = 2000;
const QUERY_TRIES = 2;

/**
 * Public names resolved by DNS queries (c-ares, `dns.Resolver`) to the servers of
 * /etc/resolv.conf, or `servers` (tests). Queries run on the event loop, not on libuv's thread
 * pool, so a name whose DNS server never answers holds no lookup slot: it cannot delay other
 * users' registrations, other endpoints' deliveries or logins. /etc/hosts is not read: outside
 * WEBHOOK_ALLOW_PRIVATE a webhook goes to a public name, which DNS answers.
 */
export function dnsResolve(servers?: readonly string[]): Resolve {
  const resolver = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES });
  if (servers) resolver.setServers(servers);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (addresses.length > 0) return addresses;
    throw v4.status === 'rejected' ? v4.reason : Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  };
}

/**
 * How names are resolved: the system resolver (getaddrinfo, on the thread pool, so in a lookup
 * slot) when private targets are allowed, since development names live in /etc/hosts; DNS queries,
 * slot-free, otherwise. An injected `resolve` (tests) stands for the system resolver.
 */
export interface Resolution {
  readonly resolve: Resolve;
  readonly pooled: boolean;
}

export function resolutionFor(allowPrivate: boolean, injected?: Resolve, servers?: readonly string[]): Resolution {
  if (injected) return { resolve: injected, pooled: true };
  return allowPrivate ? { resolve: systemResolve, pooled: true } : { resolve: dnsResolve(servers), pooled: false };
}

/** Resolves `host` the way `how` says, in a lookup slot when it runs on the thread pool. */
export const resolveIn = (how: Resolution, host: string, wanted?: () => boolean): Promise<string[]> =>
  how.pooled ? inLookupSlot(() => how.resolve(host), wanted) : how.resolve(host);
