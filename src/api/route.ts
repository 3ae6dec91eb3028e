import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Caller, Principal, ServicePrincipal } from '../auth/principal.js';
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
 * API token needs (`any` for no particular scope); `app` lets app tokens in. A `service` route is
 * for the platform's services alone: only a service credential may call it, and it no other route.
 */
export interface RouteAuth {
  readonly api?: Scope | 'any';
  readonly app?: boolean;
  readonly service?: boolean;
  /**
   * Counted under a key of its own in the caller's policy (opening the event stream), so a budget
   * spent on one kind of request never keeps the caller from the other.
   */
  readonly counter?: string;
}

/** Only a user token (the JWT of a live session): API, app and service tokens are refused (403). */
export const USER_TOKEN_ONLY: RouteAuth = Object.freeze({});

/**
 * Public routes name the limits they fall under; protected routes are limited by the guard, and
 * those that check the user's password (`password`) also by the login limits, per client address
 * and per the user's email, exactly as if each request were a login. A password reset request
 * (`password-reset`) is limited per client address and per submitted email, like a login; asking
 * for a new verification mail (`verify-email`) per user.
 * `second-factor`: the second step of a login, counted against the login limit per client address.
 * `passkey-options`: a passkey login's challenge, per client address under its own policy.
 * `device-authorization`, `device-token`, `oauth-revoke`: the OAuth endpoints, per client address.
 */
export type RouteRateLimit = 'address' | 'login' | 'signup' | 'password' | 'leak-report' | 'password-reset' | 'verify-email' | 'second-factor' | 'passkey-options' | OAuthRateLimit;

/** The OAuth endpoints' own policies, per client address (contract §13.5). */
export type OAuthRateLimit = 'device-authorization' | 'device-token' | 'oauth-revoke';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by operation() (api/operation.ts), through which every documented route is declared. */
    operationId?: string;
    method?: string;
    auth?: RouteAuth;
    rateLimit?: RouteRateLimit;
    /** Set by operation() on routes that mint a token (http/email-verification.ts). */
    mintsToken?: true;
    /** Keep the body's bytes as received in `request.rawBody` (a signature over them is checked). */
    keepRawBody?: boolean;
    /** What a valid request costs under its public rate limit, counted once the body is validated; 1 when absent. */
    rateLimitWeight?: (body: unknown) => number;
  }
  interface FastifyRequest {
    principal: Caller | null;
    /** The body's bytes, on routes with `config.keepRawBody`; null elsewhere. */
    rawBody: Buffer | null;
    /** The code of the problem the request was answered with (http/problem.ts); null otherwise. */
    problemCode: string | null;
  }
}

/** The principal of a route declared with `config.auth`; the guard has already run. */
export function principalOf(request: FastifyRequest): Principal {
  const caller = request.principal;
  if (!caller || caller.type === 'service') throw new Error(`route ${request.routeOptions.url ?? ''} has no user auth config`);
  return caller;
}

/** The platform service calling a route declared with `config.auth.service`; the guard has already run. */
export function serviceOf(request: FastifyRequest): ServicePrincipal {
  const caller = request.principal;
  if (caller?.type !== 'service') throw new Error(`route ${request.routeOptions.url ?? ''} has no service auth config`);
  return caller;
}
