import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeFeed } from '../changes/feed.js';
import { ProblemError } from '../errors.js';
import { badHost, bodyStillArriving, hasOneHost } from './framing.js';
import { isApiRoute } from './hardening.js';
import { applySecurityHeaders } from './headers.js';
import { setRateLimitHeaders } from './rate-limit.js';

/**
 * What every request goes through.
 *
 * onRequest: the security headers; the refusal of a request without exactly one Host, and of any
 * request once a graceful shutdown has begun; then, for the API, catching up with changes other
 * processes made (revocations, logouts, deletions, key rotations) so no cache, key set or signer
 * the request meets is stale.
 *
 * onSend: the RateLimit fields, and `Connection: close` once a graceful shutdown has begun, so
 * keep-alive clients let go and the server need not wait out their idle timeout, or when the answer
 * goes out before the request's body has all arrived.
 */
export function registerRequestLifecycle(app: FastifyInstance, feed: ChangeFeed): void {
  let closing = false;
  app.addHook('onRequest', (request, reply, done) => {
    applySecurityHeaders(reply);
    if (!hasOneHost(request.raw)) {
      done(badHost());
      return;
    }
    // A request that reaches an instance already shutting down (read on a connection that was busy
    // when it began) is told to go elsewhere, as a problem like any other answer (app.ts turns
    // Fastify's own off).
    if (closing) {
      done(new ProblemError('unavailable', { detail: 'This instance is shutting down. Retry.', headers: { 'retry-after': '1' } }));
      return;
    }
    done();
  });

  // Probes, docs and static pages read no caches and need no catching up, so only API routes get
  // this hook: decided on the route matched, never on the URL as sent (`/%61pi/me` reaches the
  // `/api/me` route too). First of the route's own hooks, which run after the hook above.
  const catchUp = (_request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const pending = feed.sync();
    if (pending) pending.then(() => done(), done);
    else done();
  };
  app.addHook('onRoute', (route) => {
    if (isApiRoute(route.url)) route.onRequest = [catchUp, ...[route.onRequest ?? []].flat()];
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    setRateLimitHeaders(reply, request.rateLimits);
    if (closing || bodyStillArriving(request.raw)) reply.header('connection', 'close');
    done(null, payload);
  });
}
