import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, actorOf, type RequestContext } from '../audit/events.js';
import { cleanUserAgent } from '../lib/user-agent.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The client address of a request (http/client-address.ts), as rate limits and the access log see it. */
    clientAddress: (req: IncomingMessage) => string;
  }
}

/** Who makes a request and from where, for the audit events it causes. */
export function contextOf(request: FastifyRequest): RequestContext {
  const caller = request.principal;
  return {
    actor: caller && caller.type !== 'service' ? actorOf(caller) : ANONYMOUS,
    address: request.server.clientAddress(request.raw) || null,
    userAgent: cleanUserAgent(request.headers['user-agent']),
    requestId: request.id,
  };
}
