import type { FastifyReply } from 'fastify';

/**
 * Headers on every response. API responses are per-caller and may carry credentials, so nothing is
 * cached and nothing is framed or sniffed. Pages with their own needs (docs, the Developers page)
 * override content-security-policy and cache-control.
 */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
} as const;

export function applySecurityHeaders(reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS);
  reply.header('x-request-id', reply.request.id);
}
