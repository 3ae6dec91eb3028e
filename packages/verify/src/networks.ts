import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Caller } from './caller.js';

/** `address/prefix` as rz-auth sends it (lower case, no zone id); a prefix in range for the family. */
const NETWORK = /^([0-9a-f.:]{2,45})\/([0-9]{1,3})$/;

/** A network in the IPv6 space: IPv4 as IPv4-mapped (RFC 4291 section 2.5.5.2), so either spelling of a client matches. */
type Network = [ipaddr.IPv6, number];

/**
 * An address in its standard form, in the IPv6 space. node:net decides what is an address:
 * ipaddr.js alone also reads legacy forms (`127.1`, `0x7f.0.0.1`) that name other hosts.
 */
function parseAddress(text: string): ipaddr.IPv6 | null {
  if (isIP(text) === 0) return null;
  const address = ipaddr.parse(text);
  return address instanceof ipaddr.IPv4 ? address.toIPv4MappedAddress() : address;
}

/** Whether `list` is a list of networks rz-auth could have sent: anything else is no answer to trust. */
export function isNetworkList(list: unknown): list is string[] {
  return Array.isArray(list) && list.length <= 100 && list.every((item) => parseNetwork(item) !== null);
}

function parseNetwork(item: unknown): Network | null {
  const match = typeof item === 'string' ? NETWORK.exec(item) : null;
  if (!match) return null;
  const [, text = '', digits = ''] = match;
  const version = isIP(text);
  const prefix = Number(digits);
  const address = parseAddress(text);
  if (address === null || prefix > (version === 4 ? 32 : 128)) return null;
  return [address, version === 4 ? prefix + 96 : prefix];
}

/** Each cached caller's list, parsed once. */
const lists = new WeakMap<readonly string[], Network[]>();

function networksOf(cidrs: readonly string[]): Network[] {
  let networks = lists.get(cidrs);
  if (!networks) {
    networks = cidrs.map(parseNetwork).filter((n): n is Network => n !== null);
    lists.set(cidrs, networks);
  }
  return networks;
}

/**
 * Whether `caller` may be served for a client at `address`: always for a token without an
 * allow-list; for one with a list, only when the address is known and inside one of its networks
 * (an IPv4 network also admits the IPv4-mapped IPv6 form). Unknown address, refused: fail closed.
 */
export function admits(caller: Caller, address: string | undefined): boolean {
  if (caller.allowedCidrs === undefined) return true;
  if (address === undefined) return false;
  const client = parseAddress(address);
  return client !== null && networksOf(caller.allowedCidrs).some((network) => client.match(network));
}
