import type { FieldError } from '../errors.js';
import { asIPv6, formatIp, inNetwork, type IPv6Address, isIPv4, networkAddress, parseIp } from '../lib/ip.js';

/** The most networks one token's allow-list may hold. */
export const MAX_CIDRS = 20;
/** `ffff:ffff:…/128` is 44 characters; anything longer is not a network. */
export const MAX_CIDR_LENGTH = 49;

/**
 * One network: its stored text, and its first address and prefix in the IPv6 space, an IPv4
 * network as the IPv4-mapped network holding the same addresses (RFC 4291 section 2.5.5.2), so a
 * client is matched whichever family it or the list was written in.
 */
interface Network {
  readonly text: string;
  readonly address: IPv6Address;
  readonly prefix: number;
}

/**
 * One network in `address/prefix` form (a bare address is a single host). Zone ids (`%eth0`) are
 * refused: they name an interface of the client's machine, nothing this server can check.
 */
function parseNetwork(text: string): Network | null {
  if (text.length > MAX_CIDR_LENGTH || text.includes('%')) return null;
  const slash = text.indexOf('/');
  const address = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (address === null) return null;
  const bits = isIPv4(address) ? 32 : 128;
  const prefixText = slash < 0 ? String(bits) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return null;
  const prefix = Number(prefixText);
  const first = networkAddress(address, prefix);
  return { text: `${formatIp(first)}/${prefix}`, address: asIPv6(first), prefix: prefix + 128 - bits };
}

/**
 * The allow-list a request asks for, in stored form (`network/prefix` with the host bits cleared,
 * IPv6 as RFC 5952 writes it, each network once), or
 * what is wrong with it. Every item is length-checked before it is parsed.
 */
export function parseCidrs(list: readonly string[], field = 'allowed_cidrs'): string[] | FieldError {
  if (list.length > MAX_CIDRS) return { field, message: `must hold at most ${MAX_CIDRS} networks` };
  const out: string[] = [];
  for (const [i, item] of list.entries()) {
    // Not trimmed: a stray space is refused rather than dropped, so the list stored is the one sent.
    const network = parseNetwork(item);
    if (!network) return { field, message: `item ${i} is not an IPv4 or IPv6 network (address/prefix)` };
    if (!out.includes(network.text)) out.push(network.text);
  }
  return out;
}

/** Whether `network` holds every address of `inner` (an aligned block holding one address of a smaller one holds it all). */
const holds = (network: Network, inner: Network): boolean => inner.prefix >= network.prefix && inNetwork(inner.address, network.address, network.prefix);

/** A token's allow-list, built once when the token is loaded into a cache. */
export class AllowList {
  private readonly networks: Network[] = [];
  /**
   * The last address admitted. A token's requests mostly come from one address, so the usual
   * request costs one string comparison instead of a parse. Only admissions are remembered; a
   * changed list is a new AllowList (the cache drops the token's entry).
   */
  private lastAdmitted: string | null = null;

  constructor(cidrs: readonly string[]) {
    // Stored lists were parsed on the way in; a row edited by hand to nonsense admits nothing.
    for (const cidr of cidrs) {
      const network = parseNetwork(cidr);
      if (network) this.networks.push(network);
    }
  }

  /** Whether `address` (as the rate limiter sees it) is inside the list. */
  admits(address: string): boolean {
    if (address === this.lastAdmitted) return true;
    const parsed = parseIp(address);
    if (parsed === null) return false;
    const client = asIPv6(parsed);
    const admitted = this.networks.some((n) => inNetwork(client, n.address, n.prefix));
    if (admitted) this.lastAdmitted = address;
    return admitted;
  }
}

/**
 * Whether every network of `next` lies inside some network of `current`: a narrowing. Any list
 * narrows "no list". Networks are compared in the IPv6 space, where IPv4 is mapped: the allow-list
 * admits an address by either spelling.
 */
export function narrows(current: readonly string[] | null, next: readonly string[]): boolean {
  if (current === null) return true;
  const outer = current.map(parseNetwork).filter((n): n is Network => n !== null);
  return next.every((text) => {
    const inner = parseNetwork(text);
    return inner !== null && outer.some((network) => holds(network, inner));
  });
}

/** The widest network a list of trusted proxies may name: a /8 of IPv4, a /16 of IPv6. */
const WIDEST_PROXY_PREFIX = { ipv4: 8, ipv6: 16 } as const;
/** Every IPv4 address, as IPv4-mapped IPv6. */
const ALL_IPV4 = parseNetwork('0.0.0.0/0') as Network;

/**
 * Whether a network (in any spelling {@link parseCidrs} accepts) is wider than any real set of
 * proxies: more than a /8 of IPv4 or a /16 of IPv6. IPv4 written as IPv4-mapped IPv6 counts as
 * IPv4, since a plain IPv4 client matches it: `::ffff:0.0.0.0/96`, or `::/80` which holds it, is
 * every IPv4 address.
 */
export function widerThanProxies(cidr: string): boolean {
  const network = parseNetwork(cidr);
  if (network === null) return false;
  if (holds(ALL_IPV4, network)) return network.prefix - 96 < WIDEST_PROXY_PREFIX.ipv4;
  return network.prefix < WIDEST_PROXY_PREFIX.ipv6 || holds(network, ALL_IPV4);
}
