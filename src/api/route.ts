import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { Scope } from '../tokens/scopes.js';

/*
 * What route files are written against: the Fastify instance with TypeBox types, how a route
 * declares who may call it and which limits it falls under, and the caller it was given. The
 * machinery that enforces the declarations lives in http/, which imports this, never the reverse.
 */

/** The Fastify instance routes are written against: TypeBox schemas give the handler types. */
export type Http = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * Who may call a route. A user token (JWT) may call every protected route; `api` names the scope an
 * API token needs (`any` for no particular scope); `app` lets app tokens in.
 */
export interface RouteAuth {
  readonly api?: Scope | 'any';
  readonly app?: boolean;
}

/** Public routes name the limits they fall under; protected routes are limited by the guard. */
export type RouteRateLimit = 'address' | 'login' | 'signup';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by operation() (api/operation.ts), through which every documented route is declared. */
    operationId?: string;
    auth?: RouteAuth;
    rateLimit?: RouteRateLimit;
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
