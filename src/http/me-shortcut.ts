import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../changes/feed.js';
import { requestId } from '../lib/ids.js';
import { ME_AUTH, meBody, serializeMe } from '../account/me-routes.js';
import type { Decision } from '../ratelimit/limiter.js';
import { readBearerToken } from './bearer.js';
import { bodyStillArriving, hasBody, hasOneHost } from './framing.js';
import { authorize } from './guard.js';
import { SECURITY_HEADERS } from './headers.js';
import { logRequest } from './logging.js';
import { rateLimitHeaders, type RequestLimits } from './rate-limit.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ShortcutDeps {
  readonly authenticator: Authenticator;
  readonly limits: RequestLimits;
  readonly feed: ChangeFeed;
  readonly log: FastifyBaseLogger;
  readonly clientAddress: (req: IncomingMessage) => string;
  readonly closing: () => boolean;
}

/**
 * `GET /api/me` is what the platform's services call on every request, so when the caches already
 * vouch for the token it is answered here, ahead of Fastify's per-request machinery (request and
 * reply objects, hook runners), which would otherwise cost more than the answer itself.
 *
 * Every step is the very function the route runs: the same feed check, bearer parser,
 * authentication, authorization, rate-limit count, body serializer, headers and access line. What
 * they cannot settle at once goes to Fastify with nothing counted: another request, one without a
 * single Host or with a body (Fastify refuses both), a shutdown under way, a token the caches do
 * not hold (its lookup is already running and the route's guard joins it), any error. A request
 * the limit refuses has been counted here; over its limit, Fastify's second count changes nothing,
 * and its 429 is built in the one place.
 */
export function meShortcut(deps: ShortcutDeps, fastify: RequestHandler): RequestHandler {
  const answer = (req: IncomingMessage, res: ServerResponse, start: number): void => {
    let principal: Principal;
    // Computed once: the allow-list check, the usage record and the access line all need it.
    const address = deps.clientAddress(req);
    try {
      // A refusal is handed on to the route, which records it.
      const result = deps.authenticator.authenticate(readBearerToken(req), address, false);
      if (result instanceof Promise) {
        result.catch(() => undefined);
        return fastify(req, res);
      }
      // A service credential is refused here: Fastify answers its 403.
      if (result.type === 'service') return fastify(req, res);
      authorize(result, ME_AUTH);
      principal = result;
    } catch {
      return fastify(req, res);
    }
    deps.limits.credential(principal).then(
      (decision) => (decision?.allowed === false ? fastify(req, res) : respond(deps, req, res, principal, decision, start, address)),
      () => fastify(req, res),
    ).catch((error: unknown) => {
      // Whatever respond() throws is the route's to answer (its 500 is logged there), never an
      // unhandled rejection, which would end the process.
      deps.log.error({ err: error }, 'GET /api/me shortcut failed');
      if (res.headersSent) res.destroy();
      else fastify(req, res);
    });
  };
  return (req, res) => {
    if (req.method !== 'GET' || req.url !== '/api/me' || deps.closing() || !hasOneHost(req) || hasBody(req)) return fastify(req, res);
    const start = performance.now();
    // Catch up with changes made elsewhere first, as the route's onRequest hook does.
    const pending = deps.feed.sync();
    if (pending === undefined) answer(req, res, start);
    else pending.then(() => answer(req, res, start), () => fastify(req, res));
  };
}

/** The headers every answer carries, as the name, value list that writeHead takes as it is. */
const SECURITY_HEADER_LIST = Object.entries(SECURITY_HEADERS).flat();

const answers = new WeakMap<Principal, { body: string; length: string }>();

function respond(deps: ShortcutDeps, req: IncomingMessage, res: ServerResponse, principal: Principal, decision: Decision | null, start: number, remote: string): void {
  const id = requestId();
  let answer = answers.get(principal);
  if (!answer) {
    const body = serializeMe(meBody(principal));
    answer = { body, length: String(Buffer.byteLength(body)) };
    answers.set(principal, answer);
  }
  const { body } = answer;
  const headers = [...SECURITY_HEADER_LIST, 'x-request-id', id, 'content-type', 'application/json; charset=utf-8', 'content-length', answer.length];
  for (const [name, value] of Object.entries(rateLimitHeaders(decision && [decision]))) headers.push(name, value);
  if (bodyStillArriving(req)) headers.push('connection', 'close');
  res.writeHead(200, headers);
  res.end(body);
  logRequest(deps.log, { id, method: 'GET', url: '/api/me', status: 200, ms: performance.now() - start, remote, principal });
}
