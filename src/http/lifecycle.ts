import type { FastifyInstance } from 'fastify';
import type { ChangeFeed } from '../changes/feed.js';
import { applySecurityHeaders } from './headers.js';
import type { AccessLog } from './logging.js';
import { rateLimitHeaders } from './rate-limit.js';

const API_PATH = /^\/(api|\.well-known)\//;

/**
 * What every request goes through, in one onRequest and one onSend hook (each hook costs every
 * request something, so the per-request work lives here rather than in many small hooks).
 *
 * onRequest: the security headers; then, for the API, catching up with changes other processes
 * made (revocations, logouts, deletions, key rotations) so no cache, key set or signer the request
 * meets is stale. On the fast path that is one SQLite `data_version` read and no await.
 *
 * onSend: the RateLimit fields; `Connection: close` once a graceful shutdown has begun, so
 * keep-alive clients let go and the server need not wait out their idle timeout; the access log line.
 */
export function registerRequestLifecycle(app: FastifyInstance, feed: ChangeFeed, accessLog: AccessLog): void {
  app.addHook('onRequest', (request, reply, done) => {
    applySecurityHeaders(reply);
    // Probes, docs and static pages read no caches and need no catching up.
    const pending = API_PATH.test(request.url) ? feed.sync() : undefined;
    if (pending) pending.then(() => done(), done);
    else done();
  });

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const limits = rateLimitHeaders(request);
    if (limits) reply.header('ratelimit-policy', limits.policy).header('ratelimit', limits.limit);
    if (closing) reply.header('connection', 'close');
    accessLog.write(request, reply);
    done(null, payload);
  });
}
