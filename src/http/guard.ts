import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { insufficientScope } from '../errors.js';
import type { Scope } from '../tokens/scopes.js';
import { readBearerToken } from './bearer.js';
import { takeAdmission } from './fast-path.js';
import type { RequestLimits } from './rate-limit.js';

/**
 * Who may call a route. A user token (JWT) may call every protected route; `api` names the scope an
 * API token needs (`any` for no particular scope); `app` lets app tokens in.
 */
export interface RouteAuth {
  readonly api?: Scope | 'any';
  readonly app?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The principal of a route declared with `config.auth`; the guard has already run. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url ?? ''} has no auth config`);
  return request.principal;
}

/** The scope an operation needs, as named in `WWW-Authenticate`; `*` means a user token. */
function neededScope(auth: RouteAuth): string {
  return auth.api === undefined || auth.api === 'any' ? '*' : auth.api;
}

/** The authorization matrix of the contract, for one route and one principal. */
function authorize(principal: Principal, auth: RouteAuth): void {
  if (principal.type === 'user') return;
  if (principal.type === 'app_token') {
    if (!auth.app) throw insufficientScope(neededScope(auth));
    return;
  }
  if (auth.api === undefined || (auth.api !== 'any' && !principal.scopes.includes(auth.api))) {
    throw insufficientScope(neededScope(auth));
  }
}

/**
 * Authenticates, rate-limits and authorizes the routes that declare `config.auth`, in onRequest:
 * before the body is read, so anonymous callers cannot make the server parse anything. The hook is
 * attached to those routes only.
 */
export function registerGuard(app: FastifyInstance, authenticator: Authenticator, limits: RequestLimits): void {
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) return;
    const guard = async (request: FastifyRequest): Promise<void> => {
      let principal: Principal;
      // The fast path may have authenticated and counted the request already (http/fast-path.ts).
      const admitted = takeAdmission(request.raw);
      if (admitted) {
        principal = admitted.principal;
        if (admitted.error) throw admitted.error;
        limits.apply(request, admitted.decision);
      } else {
        try {
          principal = await authenticator.authenticate(readBearerToken(request.raw));
        } catch (error) {
          // Failed authentication counts against the client address, so token guessing is throttled.
          await limits.byAddress(request);
          throw error;
        }
        await limits.byCredential(request, principal);
      }
      authorize(principal, auth);
      request.principal = principal;
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), guard];
  });
}
