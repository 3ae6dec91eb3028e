import { METHODS as NODE_METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type FieldError, PROBLEM_LIMITS, ProblemError, validationFailed } from '../errors.js';
import { redactQuoted } from '../lib/redact.js';
import { countHeader, hasBody } from './framing.js';
import { BODY_LIMIT } from './json-body.js';
import { isMediaType } from './media-type.js';
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

/** Whether the path pattern `url` (`/api/tokens/leaked`) also matches `pattern` (`/api/tokens/:id`). */
function matchesPattern(url: string, pattern: string): boolean {
  const segments = url.split('/');
  const parts = pattern.split('/');
  return segments.length === parts.length && parts.every((part, i) => part === segments[i] || (part.startsWith(':') && !segments[i]?.startsWith(':')));
}

/** Whether another route answers `method` at `url`'s address. */
const servedElsewhere = (routes: Map<string, Set<string>>, url: string, method: string): boolean =>
  [...routes].some(([pattern, methods]) => pattern !== url && methods.has(method) && matchesPattern(url, pattern));

export function registerMethodNotAllowed(app: FastifyInstance, routes: Map<string, Set<string>>): void {
  // Every method Node's parser knows is routed (CONNECT reaches Fastify through framing.ts's
  // answerConnect), so an API path answers any method it does not serve (TRACE, QUERY, PROPFIND,
  // CONNECT...) with 405, never with a 404 as if the path did not exist. Their bodies are never read.
  for (const method of NODE_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
  for (const [url, methods] of [...routes]) {
    const allow = ALLOW_ORDER.filter((m) => methods.has(m));
    // A method another route serves at this address is that route's: `DELETE /api/tokens/leaked`
    // is a DELETE of a malformed token id (404), not a wrong method on the leak report (405).
    const missing = app.supportedMethods.filter((m) => !methods.has(m) && !servedElsewhere(routes, url, m));
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

const NO_BODY: FieldError = { field: 'body', message: 'must be absent: this operation takes no body' };

/** What is wrong with a body sent to an operation that takes none; null for none or `{}`. */
function unexpectedBody(body: unknown): FieldError[] | null {
  if (body === undefined) return null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [NO_BODY];
  // A field is named after what the client sent, which can be a token: never echo one.
  const fields = Object.keys(body).slice(0, PROBLEM_LIMITS.errors).map((name) => ({ field: redactQuoted(name, PROBLEM_LIMITS.text), message: 'is not allowed' }));
  return fields.length === 0 ? null : fields;
}

/**
 * What is wrong with the body of a GET or a HEAD, which Fastify never reads: told from the headers
 * alone, in the order a read body is refused (its type, its size, then that there is one), so the
 * answer is the one a DELETE would get, and no byte of it is read; null when there is none.
 */
function unreadBody(request: FastifyRequest): ProblemError | null {
  if (!hasBody(request.raw)) return null;
  const type = request.headers['content-type'];
  if (countHeader(request.raw.rawHeaders, 'content-type') > 1 || !isMediaType(type ?? '', 'application/json')) return new ProblemError('unsupported_media_type');
  if (Number(request.headers['content-length']) > BODY_LIMIT) return new ProblemError('payload_too_large');
  return validationFailed([NO_BODY]);
}

/**
 * An API operation that takes no body refuses one, as the others refuse unknown fields: a client
 * that sends `{"user_id": …}` to a DELETE, or a body of any kind to a GET, must not believe it was
 * heard. For a DELETE (whose body is read) `{}` passes, for clients that always send an object; an
 * empty body passes whatever its Content-Type. Checked after the guard, so an anonymous caller's
 * body is never read.
 */
export function refuseUnexpectedBodies(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!isApiRoute(route.url) || route.schema?.body !== undefined) return;
    const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
      if (request.method === 'GET' || request.method === 'HEAD') {
        done(unreadBody(request) ?? undefined);
        return;
      }
      const fields = unexpectedBody(request.body);
      done(fields ? validationFailed(fields) : undefined);
    };
    route.preValidation = [...[route.preValidation ?? []].flat(), check];
    // An empty body is no body: a type named for one anyway (generated clients often send
    // Content-Type with every request) is not parsed, so it is neither 400 nor 415.
    const emptyIsNone = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
      const { headers } = request;
      if (headers['content-length'] === '0' && headers['transfer-encoding'] === undefined) delete headers['content-type'];
      done();
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), emptyIsNone];
  });
}
