import { BlockList, isIP } from 'node:net';
import type { FieldError } from '../errors.js';
import { ipv6Groups, mappedIPv4 } from '../lib/ip.js';

/** The most networks one token's allow-list may hold. */
export const MAX_CIDRS = 20;
/** `ffff:ffff:…/128` is 44 characters; anything longer is not a network. */
export const MAX_CIDR_LENGTH = 49;

interface Network {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/**
 * One network in `address/prefix` form (a bare address is a single host). Zone ids (`%eth0`) are
 * refused: they name an interface of the client's machine, nothing this server can check.
 */
function parseNetwork(text: string): Network | null {
  if (text.length > MAX_CIDR_LENGTH || text.includes('%')) return null;
  const slash = text.indexOf('/');
  const address = (slash < 0 ? text : text.slice(0, slash)).toLowerCase();
  const version = isIP(address);
  if (version === 0) return null;
  const bits = version === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(bits) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return null;
  const prefix = Number(prefixText);
  return version === 4
    ? { address: ipv4Network(address, prefix), prefix, family: 'ipv4' }
    : { address: ipv6Network(address, prefix), prefix, family: 'ipv6' };
}

/** The bits of `value` (of `width` bits) inside a prefix of `keep` bits, the rest zero. */
const masked = (value: number, width: number, keep: number): number =>
  keep >= width ? value : keep <= 0 ? 0 : value & ~((1 << (width - keep)) - 1) & ((1 << width) - 1);

/** The network's first address, as `a.b.c.d`: `10.1.2.3/8` is `10.0.0.0/8`. */
function ipv4Network(address: string, prefix: number): string {
  return address
    .split('.')
    .map((octet, i) => masked(Number(octet), 8, prefix - 8 * i))
    .join('.');
}

/**
 * The network's first address in RFC 5952 form (lower case, no leading zeros, the longest run of
 * zero groups as `::`, an IPv4-mapped address in dotted form).
 */
function ipv6Network(address: string, prefix: number): string {
  const groups = ipv6Groups(address).map((group, i) => masked(group, 16, prefix - 16 * i));
  const mapped = mappedIPv4(groups);
  if (mapped !== null) return `::ffff:${mapped}`;
  // The WHATWG URL parser writes an IPv6 address compressed as RFC 5952 asks.
  return new URL(`http://[${groups.map((g) => g.toString(16)).join(':')}]/`).hostname.slice(1, -1);
}

const format = (n: Network): string => `${n.address}/${n.prefix}`;

/**
 * The allow-list a request asks for, in stored form (`network/prefix` with the host bits cleared,
 * IPv6 as RFC 5952 writes it, each network once), or
 * what is wrong with it. Every item is length-checked before it is parsed.
 */
export function parseCidrs(list: readonly string[], field = 'allowed_cidrs'): string[] | FieldError {
  if (list.length > MAX_CIDRS) return { field, message: `must hold at most ${MAX_CIDRS} networks` };
  const out: string[] = [];
  for (const [i, item] of list.entries()) {
    // Not trimmed: the contract trims strings only where it says so, and it does not say so here.
    const network = parseNetwork(item);
    if (!network) return { field, message: `item ${i} is not an IPv4 or IPv6 network (address/prefix)` };
    const text = format(network);
    if (!out.includes(text)) out.push(text);
  }
  return out;
}

/**
 * A token's allow-list, built once when the token is loaded into a cache: node's BlockList, which
 * also matches IPv4-mapped IPv6 addresses.
 */
export class AllowList {
  private readonly list = new BlockList();
  /**
   * The last address admitted. A token's requests mostly come from one address, and a BlockList
   * check costs microseconds, so the usual request costs one string comparison. Only admissions are
   * remembered; a changed list is a new AllowList (the cache drops the token's entry).
   */
  private lastAdmitted: string | null = null;

  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const network = parseNetwork(cidr);
      // Stored lists were parsed on the way in; a row edited by hand to nonsense admits nothing.
      if (network) this.list.addSubnet(network.address, network.prefix, network.family);
    }
  }

  /** Whether `address` (as the rate limiter sees it) is inside the list. */
  admits(address: string): boolean {
    if (address === this.lastAdmitted) return true;
    const version = isIP(address);
    const admitted = version !== 0 && this.list.check(address, version === 4 ? 'ipv4' : 'ipv6');
    if (admitted) this.lastAdmitted = address;
    return admitted;
  }
}

/** An IPv4 network as the IPv4-mapped IPv6 network holding the same addresses. */
const asIpv6 = (n: Network): Network => (n.family === 'ipv6' ? n : { address: `::ffff:${n.address}`, prefix: n.prefix + 96, family: 'ipv6' });

/**
 * Whether every network of `next` lies inside some network of `current`: a narrowing. Any list
 * narrows "no list". A network inside another has a prefix at least as long and its address in it
 * (the outer block is aligned, so one address inside means the whole inner block is). Two families
 * are compared as IPv6, where IPv4 is mapped: the allow-list admits an address by either spelling.
 */
export function narrows(current: readonly string[] | null, next: readonly string[]): boolean {
  if (current === null) return true;
  const outer = current.map(parseNetwork).filter((n): n is Network => n !== null);
  return next.every((text) => {
    const parsed = parseNetwork(text);
    return (
      parsed !== null &&
      outer.some((candidate) => {
        const [o, inner] = candidate.family === parsed.family ? [candidate, parsed] : [asIpv6(candidate), asIpv6(parsed)];
        if (inner.prefix < o.prefix) return false;
        const single = new BlockList();
        single.addSubnet(o.address, o.prefix, o.family);
        return single.check(inner.address, inner.family);
      })
    );
  });
}

/** The widest network a list of trusted proxies may name: a /8 of IPv4, a /16 of IPv6. */
const WIDEST_PROXY_PREFIX = { ipv4: 8, ipv6: 16 } as const;

/**
 * Whether a network (in any spelling {@link parseCidrs} accepts) is wider than any real set of
 * proxies: more than a /8 of IPv4 or a /16 of IPv6. IPv4 written as IPv4-mapped IPv6 counts as
 * IPv4, since BlockList matches plain IPv4 addresses against it: `::ffff:0.0.0.0/96`, or `::/80`
 * which holds it, is every IPv4 address.
 */
export function widerThanProxies(cidr: string): boolean {
  const network = parseNetwork(cidr);
  if (network === null) return false;
  const { address, prefix, family } = network;
  if (family === 'ipv4') return prefix < WIDEST_PROXY_PREFIX.ipv4;
  if (prefix < WIDEST_PROXY_PREFIX.ipv6) return true;
  if (address.startsWith('::ffff:') && prefix >= 96) return prefix - 96 < WIDEST_PROXY_PREFIX.ipv4;
  // A shorter prefix that holds ::ffff:0:0 holds all of the mapped block.
  const holder = new BlockList();
  holder.addSubnet(address, prefix, 'ipv6');
  return prefix <= 96 && holder.check('::ffff:0:0', 'ipv6');
}
