import { METHODS as NODE_METHODS } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../errors.js';
import { sendProblem } from './problem.js';

/** The order of an Allow list. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Whether a route path (as registered, e.g. `/api/tokens/:id`) is the API's, not a page's or a probe's. */
export const isApiRoute = (url: string | undefined): boolean => url !== undefined && /^\/(api|\.well-known)\//.test(url);

/** Unknown paths are a `not_found` problem, not Fastify's default body. */
export function registerNotFound(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new ProblemError('not_found')));
}

/**
 * Records every route so that, once all are registered, each known path answers the methods it
 * does not support with 405 and an `Allow` header instead of 404.
 */
export function collectRoutes(app: FastifyInstance): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (!isApiRoute(route.url)) return;
    const methods = routes.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m);
    routes.set(route.url, methods);
  });
  return routes;
}

export function registerMethodNotAllowed(app: FastifyInstance, routes: Map<string, Set<string>>): void {
  // Every method Node's parser hands on as a request (CONNECT opens a tunnel instead) is routed, so
  // an API path answers any method it does not serve (TRACE, QUERY, PROPFIND...) with 405, never
  // with a 404 as if the path did not exist. Their bodies are never read.
  for (const method of NODE_METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
  for (const [url, methods] of [...routes]) {
    const allow = ALLOW_ORDER.filter((m) => methods.has(m));
    const missing = app.supportedMethods.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      // Answered before any body is parsed, so no method's own body rule (QUERY's required
      // Content-Type) comes first.
      onRequest: (request, reply, done) => {
        sendProblem(request, reply.header('allow', allow.join(', ')), new ProblemError('method_not_allowed'));
        done();
      },
      handler: () => undefined,
    });
  }
}

