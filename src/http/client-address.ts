import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config.js';

type TrustFn = (address: string, hop: number) => boolean;

/** Fastify's form of TRUST_PROXY: a hop count becomes "believe the nearest n hops". */
export function trustProxyOption(trust: Config['trustProxy']): false | string[] | TrustFn {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

/**
 * The client address exactly as Fastify's `request.ip` computes it from {@link trustProxyOption}
 * (the same library, @fastify/proxy-addr, with the same trust), for code that runs without a
 * Fastify request.
 */
export function clientAddressOf(trust: Config['trustProxy']): (req: IncomingMessage) => string | undefined {
  const option = trustProxyOption(trust);
  if (option === false) return (req) => req.socket.remoteAddress;
  const trusted = typeof option === 'function' ? option : proxyAddr.compile(option);
  return (req) => proxyAddr.all(req, trusted).at(-1);
}
