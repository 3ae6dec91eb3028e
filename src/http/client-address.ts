import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config.js';

/**
 * The client address of a request: the socket's, unless TRUST_PROXY names the proxies whose
 * `X-Forwarded-For` to believe (a hop count, or their addresses and CIDRs). Rate limits and the
 * access log both use this one function (Fastify's own `request.ip` is not configured, and lint
 * forbids reading it), so no two parts of the service can disagree about who a client is.
 */
export function clientAddressOf(trust: Config['trustProxy']): (req: IncomingMessage) => string {
  if (trust === false) return (req) => req.socket.remoteAddress ?? '';
  const trusted = typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : proxyAddr.compile([...trust]);
  return (req) => proxyAddr(req, trusted);
}
