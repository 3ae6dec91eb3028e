import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, actorOf, type RequestContext } from '../audit/events.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The client address of a request (http/client-address.ts), as rate limits and the access log see it. */
    clientAddress: (req: IncomingMessage) => string;
  }
}

/** What of a user agent the audit log keeps: enough to recognise a client, bounded. */
export const MAX_USER_AGENT = 256;
/** C0, DEL and C1 controls and the bidirectional overrides: a log reader's terminal must not interpret them. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A user agent as recorded: controls removed, at most {@link MAX_USER_AGENT} characters; null when absent. */
export function cleanUserAgent(value: string | undefined): string | null {
  if (value === undefined) return null;
  // Cut before cleaning, so the work is bounded by the cap, not by the header's length.
  const clean = value.slice(0, MAX_USER_AGENT * 2).replace(CONTROL, '').slice(0, MAX_USER_AGENT).trim();
  return clean === '' ? null : clean;
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
