import { isIPv4, parseIp, unmapped } from '../lib/ip.js';

/**
 * The rate-limit bucket of a client address. An IPv6 client usually controls a whole /64 (RFC 4291
 * section 2.5.1 interface ids), so all addresses in one /64 share a bucket; IPv4-mapped IPv6
 * addresses count as the IPv4 address.
 */
export function addressKey(ip: string): string {
  const text = ip.split('%')[0] ?? ip;
  const parsed = parseIp(text);
  if (parsed === null) return text;
  const address = unmapped(parsed);
  if (isIPv4(address)) return address.toString();
  return `${address.parts.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
