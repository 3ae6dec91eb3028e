import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** What a front-end script may read of an answer beyond the CORS-safelisted headers. */
export const CORS_EXPOSED_HEADERS = ['WWW-Authenticate', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id'] as const;
const ALLOWED_HEADERS = ['Authorization', 'Content-Type'];
const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];

/**
 * CORS for the platform's own front-ends (CORS_ORIGINS, exact origins; nothing when empty).
 * Credentials are bearer tokens the page holds, never cookies, so Access-Control-Allow-Credentials
 * is never sent: a page of a listed origin reads answers only to requests it authorised itself.
 * The preflight is answered in an onRequest hook ahead of every route's guard, which a preflight
 * could never pass (browsers send it without the Authorization header). An OPTIONS that is no
 * preflight, or one from an origin not listed, goes on to the route as if CORS were off (405).
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const listed = new Set(origins);
  const allowed = { origin: [...origins], methods: METHODS, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: [...CORS_EXPOSED_HEADERS], credentials: false, maxAge: 600, strictPreflight: false };
  await app.register(cors, {
    delegator: (request, callback) => {
      const { origin } = request.headers;
      const preflightOrNone = request.method !== 'OPTIONS' || request.headers['access-control-request-method'] !== undefined;
      callback(null, origin !== undefined && listed.has(origin) && preflightOrNone ? allowed : { origin: false });
    },
  });
}
