import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A parsed IPv4 or IPv6 address (ipaddr.js). */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
export type IPv6Address = ipaddr.IPv6;

/** Whether a parsed address is IPv4. */
export const isIPv4 = (address: IpAddress): address is ipaddr.IPv4 => address.kind() === 'ipv4';

/**
 * `text` parsed, when it is an IP address in its standard form: dotted decimal IPv4, or IPv6 as
 * RFC 4291 section 2.2 writes it (a zone id is kept on the result, RFC 6874). node:net decides what
 * counts as one; ipaddr.js alone also reads legacy forms (`127.1`, `0x7f.0.0.1`, `010.0.0.1` as
 * octal) that no proxy or person writes as an address, and that would name a different host.
 */
export function parseIp(text: string): IpAddress | null {
  return isIP(text) === 0 ? null : ipaddr.parse(text);
}

/** The address in the IPv6 space: IPv4 as its IPv4-mapped form (RFC 4291 section 2.5.5.2). */
export const asIPv6 = (address: IpAddress): IPv6Address => (isIPv4(address) ? address.toIPv4MappedAddress() : address);

/** The IPv4 address an IPv4-mapped IPv6 address stands for; any other address as it is. */
export const unmapped = (address: IpAddress): IpAddress =>
  !isIPv4(address) && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;

/** RFC 5952 text (lower case, the longest zero run as `::`), an IPv4-mapped address with a dotted tail (its section 5). */
export function formatIp(address: IpAddress): string {
  if (isIPv4(address)) return address.toString();
  return address.isIPv4MappedAddress() ? `::ffff:${address.toIPv4Address().toString()}` : address.toRFC5952String();
}

/** The first address of the network of `prefix` bits holding `address` (its host bits cleared). */
export function networkAddress(address: IpAddress, prefix: number): IpAddress {
  const mask = (isIPv4(address) ? ipaddr.IPv4 : ipaddr.IPv6).subnetMaskFromPrefixLength(prefix).toByteArray();
  return ipaddr.fromByteArray(address.toByteArray().map((byte, i) => byte & (mask[i] ?? 0)));
}

/** Whether `address` lies inside the network `network/prefix`, both in the IPv6 space. */
export const inNetwork = (address: IPv6Address, network: IPv6Address, prefix: number): boolean => address.match(network, prefix);

const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 address carried inside an IPv6 one, or null: IPv4-mapped (RFC 4291 section 2.5.5.2),
 * IPv4-compatible (`::/96`, its section 2.5.5.1, which also holds `::` and `::1`), the NAT64
 * well-known prefix (RFC 6052) and 6to4 (RFC 3056). Such an address reaches the IPv4 host inside it.
 */
export function embeddedIPv4(address: IPv6Address): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  const v4 = (at: number) => new ipaddr.IPv4(bytes.slice(at, at + 4));
  if (address.isIPv4MappedAddress() || address.match(NAT64) || bytes.slice(0, 12).every((b) => b === 0)) return v4(12);
  if (address.range() === '6to4') return v4(2);
  return null;
}
