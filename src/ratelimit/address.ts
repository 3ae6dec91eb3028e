import { isIPv4, isIPv6 } from 'node:net';
import { ipv6Groups, mappedIPv4 } from '../lib/ip.js';

/**
 * The rate-limit bucket of a client address. An IPv6 client usually controls a whole /64, so all
 * addresses in one /64 share a bucket; IPv4-mapped IPv6 addresses count as the IPv4 address.
 */
export function addressKey(ip: string): string {
  const address = ip.split('%')[0] ?? ip;
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const mapped = mappedIPv4(groups);
  if (mapped !== null) return mapped;
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
