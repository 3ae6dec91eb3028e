import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteAuth } from '../api/route.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Caller } from '../auth/principal.js';
import { insufficientScope, ProblemError, SERVICE_SCOPE } from '../errors.js';
import { ATTR, type Tracing } from '../tracing/tracing.js';
import { readBearerToken } from './bearer.js';
import type { RequestLimits } from './rate-limit.js';

/** The scope an operation needs, as named in `WWW-Authenticate`; `*` means a user token. */
function neededScope(auth: RouteAuth): string {
  return auth.api === undefined || auth.api === 'any' ? '*' : auth.api;
}

/**
 * The authorization matrix (docs/security.md, Authorization), for one route and one caller. A service credential may
 * call the service routes and nothing else; nothing else may call them.
 */
export function authorize(principal: Caller, auth: RouteAuth): void {
  if (auth.service) {
    if (principal.type !== 'service') throw insufficientScope(SERVICE_SCOPE);
    return;
  }
  if (principal.type === 'service') throw insufficientScope(neededScope(auth));
  if (principal.type === 'user') return;
  if (principal.type === 'app_token') {
    if (!auth.app) throw insufficientScope(neededScope(auth));
    return;
  }
  if (auth.api === undefined || (auth.api !== 'any' && !principal.scopes.includes(auth.api))) {
    throw insufficientScope(neededScope(auth));
  }
}

/** What the guard decided, on the request's span: the credential's type (never the credential) and the outcome. */
function traceDecision(tracing: Tracing, request: FastifyRequest, principal: Caller | null, error: unknown): void {
  const outcome = error === null ? 'ok' : error instanceof ProblemError ? error.code : 'error';
  tracing.annotateRequest(request.raw, { [ATTR.tokenType]: principal?.type ?? 'none', [ATTR.outcome]: outcome });
}

/**
 * Authenticates, rate-limits and authorizes the routes that declare `config.auth`, in onRequest:
 * before the body is read, so anonymous callers cannot make the server parse anything. The hook is
 * attached to those routes only.
 */
export function registerGuard(app: FastifyInstance, authenticator: Authenticator, limits: RequestLimits, clientAddress: (req: IncomingMessage) => string, tracing: Tracing): void {
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) return;
    const guard = async (request: FastifyRequest): Promise<void> => {
      let principal: Caller | null = null;
      try {
        try {
          // The address the rate limiter counts: a token's allow-list is checked against it.
          principal = await authenticator.authenticate(readBearerToken(request.raw), clientAddress(request.raw));
        } catch (error) {
          // Failed authentication counts against the client address, so token guessing is throttled.
          await limits.byAddress(request);
          throw error;
        }
        await limits.byCredential(request, principal, auth.counter);
        authorize(principal, auth);
      } catch (error) {
        if (tracing.enabled) traceDecision(tracing, request, principal, error);
        throw error;
      }
      if (auth.api !== undefined && auth.api !== 'any' && principal.type === 'api_token') authenticator.exercised(principal, auth.api);
      request.principal = principal;
      if (tracing.enabled) traceDecision(tracing, request, principal, null);
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), guard];
  });
}
