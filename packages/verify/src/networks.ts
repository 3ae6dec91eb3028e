import { BlockList, isIP } from 'node:net';
import type { Caller } from './caller.js';

/** `address/prefix` as rz-auth sends it (lower case, no zone id); a prefix in range for the family. */
const NETWORK = /^([0-9a-f.:]{2,45})\/([0-9]{1,3})$/;

/** Whether `list` is a list of networks rz-auth could have sent: anything else is no answer to trust. */
export function isNetworkList(list: unknown): list is string[] {
  return Array.isArray(list) && list.length <= 100 && list.every((item) => parseNetwork(item) !== null);
}

function parseNetwork(item: unknown): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const match = typeof item === 'string' ? NETWORK.exec(item) : null;
  if (!match) return null;
  const [, address = '', digits = ''] = match;
  const version = isIP(address);
  const prefix = Number(digits);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Each cached caller's list, parsed once. */
const lists = new WeakMap<readonly string[], BlockList>();

function blockList(networks: readonly string[]): BlockList {
  let list = lists.get(networks);
  if (!list) {
    list = new BlockList();
    for (const item of networks) {
      const network = parseNetwork(item);
      if (network) list.addSubnet(network.address, network.prefix, network.family);
    }
    lists.set(networks, list);
  }
  return list;
}

/**
 * Whether `caller` may be served for a client at `address`: always for a token without an
 * allow-list; for one with a list, only when the address is known and inside one of its networks
 * (an IPv4 network also admits the IPv4-mapped IPv6 form). Unknown address, refused: fail closed.
 */
export function admits(caller: Caller, address: string | undefined): boolean {
  if (caller.allowedCidrs === undefined) return true;
  if (address === undefined) return false;
  const version = isIP(address);
  return version !== 0 && blockList(caller.allowedCidrs).check(address, version === 4 ? 'ipv4' : 'ipv6');
}
