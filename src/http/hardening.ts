import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../errors.js';
import { sendProblem } from './problem.js';

/** The methods an API path answers 405 for, with its Allow list, when it has no route of them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;

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
  for (const [url, methods] of [...routes]) {
    const allow = METHODS.filter((m) => methods.has(m));
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      handler: (request, reply) => {
        reply.header('allow', allow.join(', '));
        return sendProblem(request, reply, new ProblemError('method_not_allowed'));
      },
    });
  }
}

