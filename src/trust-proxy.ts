import { ConfigError } from './lib/env-vars.js';
import { parseIp } from './lib/ip.js';
import { parseCidrs, widerThanProxies } from './tokens/cidrs.js';

/**
 * Which proxies may set X-Forwarded-For: false (the socket address is the client), a hop count, or
 * a list of proxy addresses/CIDRs. Never "trust everyone".
 */
export type TrustProxy = false | number | readonly string[];

/** More proxies than any real chain of them (CDN, load balancer, ingress…). */
const MAX_PROXY_HOPS = 10;

/**
 * Parses TRUST_PROXY (`value`, unset when undefined).
 * @throws ConfigError naming TRUST_PROXY when it is not a safe hop count or list of proxies.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  if (value === undefined || ['false', '0', 'off', 'no'].includes(value.toLowerCase())) return false;
  if (/^\d+$/.test(value)) {
    // More hops than a request really passes makes the client's own first entry the address.
    if (Number(value) > MAX_PROXY_HOPS) throw new ConfigError(`TRUST_PROXY must be at most ${MAX_PROXY_HOPS} hops, got "${value}"`);
    return Number(value);
  }
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.find((item) => !Array.isArray(parseCidrs([item])));
  if (bad !== undefined) throw new ConfigError(`TRUST_PROXY must be a hop count or a list of proxy addresses/CIDRs, got "${bad}"`);
  // "true", or a network holding every address (or a large part of the internet), would believe
  // any X-Forwarded-For, which lets every client pick its own rate-limit bucket and address.
  const everyone = list.find((item) => /\/0+$/.test(item));
  if (everyone !== undefined) throw new ConfigError(`TRUST_PROXY must name the proxies, not every address, got "${everyone}"`);
  const wide = list.find(widerThanProxies);
  if (wide !== undefined) throw new ConfigError(`TRUST_PROXY must name the proxies, not a network wider than a /8 of IPv4 or a /16 of IPv6, got "${wide}"`);
  return list;
}

/** The variable that confirms a hop count on every interface is safe (only the proxy reaches the port). */
export const HOPS_CONFIRMED = 'TRUST_PROXY_HOPS_CONFIRMED';

/**
 * Refuses a hop count with a wildcard HOST (`0.0.0.0`, `::`) unless {@link HOPS_CONFIRMED}: a
 * hop count believes the last entries of X-Forwarded-For whoever sent the request, so any client
 * that reaches the port directly, not through the proxy, picks its own address (its rate-limit
 * bucket, its allow-list match, the address in the audit log). Naming the proxies has no such hole.
 * @throws ConfigError naming TRUST_PROXY and the confirmation variable.
 */
export function checkHopsOnWildcard(trust: TrustProxy, host: string, confirmed: boolean): void {
  if (typeof trust !== 'number' || confirmed || parseIp(host)?.range() !== 'unspecified') return;
  throw new ConfigError(
    `TRUST_PROXY=${trust} counts proxy hops, but HOST=${host} listens on every interface: any client that reaches the port ` +
      `directly would pick its own address through X-Forwarded-For. Name the proxies instead (TRUST_PROXY=<their addresses or CIDRs>), ` +
      `listen on an interface only the proxy reaches, or set ${HOPS_CONFIRMED}=true if a firewall lets only the proxy reach the port`,
  );
}
