import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config.js';

/**
 * The client address of a request: the socket's, unless TRUST_PROXY names the proxies whose
 * `X-Forwarded-For` to believe (a hop count, or their addresses and CIDRs). Rate limits, allow-lists,
 * the access log and every stored address (sessions, last use, the audit log) use this one function
 * (Fastify's own `request.ip` is not configured, and lint forbids reading it), so no two parts of
 * the service can disagree about who a client is.
 *
 * What a client wrote can reach the header through a proxy that passes it on, so a forwarded entry
 * is believed only when it is an IP address (no zone id, which means nothing beyond the proxy's own
 * link), bare or in the `1.2.3.4:port` and `[v6]:port` forms some proxies write: the walk from the
 * socket stops at the first that is not, and the last hop believed is the client. Junk is then
 * neither a fresh rate-limit bucket nor a stored "address".
 */
export function clientAddressOf(trust: Config['trustProxy']): (req: IncomingMessage) => string {
  if (trust === false) return (req) => req.socket.remoteAddress ?? '';
  const trusted = typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : proxyAddr.compile([...trust]);
  return (req) => {
    // The socket's address first, then each forwarded hop believed, nearest first.
    const hops = proxyAddr.all(req, trusted);
    let client = hops[0] ?? '';
    for (let i = 1; i < hops.length; i++) {
      const hop = addressOf(hops[i] as string);
      if (hop === null) break;
      client = hop;
    }
    return client;
  };
}

/** An IPv4 address with a port, or an IPv6 address in brackets with or without one. */
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}|\[([0-9A-Fa-f:.]{2,45})\](?::\d{1,5})?)$/;

/** The IP address a forwarded entry names, or null when it names none (entries are short: the header is bounded). */
function addressOf(entry: string): string | null {
  const ported = WITH_PORT.exec(entry);
  const address = ported ? ((ported[1] ?? ported[2]) as string) : entry;
  const version = isIP(address);
  // Brackets hold an IPv6 address only; a zone id means nothing beyond the proxy's own link.
  if (version === 0 || (ported?.[2] !== undefined && version !== 6) || address.includes('%')) return null;
  return address;
}
