import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { ProblemError } from '../errors.js';
import { perObject } from '../lib/per-object.js';
import { addressKey } from '../ratelimit/address.js';
import { type Decision, emailKey, type RateLimiter } from '../ratelimit/limiter.js';
import type { PolicyName } from '../ratelimit/policies.js';

/** Public routes name the limits they fall under; protected routes are limited by the guard. */
export type RouteRateLimit = 'address' | 'login' | 'signup';

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
  interface FastifyRequest {
    rateLimits: Decision[] | null;
  }
}

const rateLimited = (decision: Decision) => new ProblemError('rate_limited', { headers: { 'retry-after': String(decision.resetSeconds) } });

/**
 * The bucket of an authenticated caller: the user for user tokens, the token itself otherwise.
 * Cached principals are the same object request after request, so each key is built (and hashed
 * by the counter store's map) once.
 */
export const credentialKey = perObject((principal: Principal): string =>
  principal.type === 'user' ? `user:${principal.user.id}` : `token:${principal.credentialId}`,
);

/** Counts requests against the policies and records the decisions for the response headers. */
export class RequestLimits {
  constructor(private readonly limiter: RateLimiter) {}

  /** Counts one request; @throws rate_limited (with Retry-After) when the policy is spent. */
  async enforce(request: FastifyRequest, policy: PolicyName, key: string): Promise<void> {
    this.apply(request, await this.limiter.consume(policy, key));
  }

  /** Records a decision taken already; @throws rate_limited when it refused the request. */
  apply(request: FastifyRequest, decision: Decision | null): void {
    if (decision === null) return;
    (request.rateLimits ??= []).push(decision);
    if (!decision.allowed) throw rateLimited(decision);
  }

  /**
   * Counts one request of an authenticated caller, without a request to record it on, and hands
   * the outcome to a callback (see {@link RateLimiter.count}; neither callback may throw).
   */
  countCredential(principal: Principal, decided: (decision: Decision | null) => void, failed: (error: ProblemError) => void): void {
    this.limiter.count('credential', credentialKey(principal), decided, failed);
  }

  byAddress(request: FastifyRequest): Promise<void> {
    return this.enforce(request, 'address', addressKey(request.ip));
  }

  async byCredential(request: FastifyRequest, principal: Principal): Promise<void> {
    this.apply(request, await this.limiter.consume('credential', credentialKey(principal)));
  }

  /**
   * Login and signup: per address, then per submitted email whether or not an account exists, so
   * the limit never tells which emails are registered. The email is counted only for requests the
   * address limit admitted: a client refused by it can neither charge someone's email nor make the
   * server keep a counter for each email it makes up. A refused response then names the address
   * limit alone, the only one that applied.
   */
  async byAddressAndEmail(request: FastifyRequest, kind: 'login' | 'signup', email: string): Promise<void> {
    this.apply(request, await this.limiter.consume(`${kind}-address`, addressKey(request.ip)));
    this.apply(request, await this.limiter.consume(`${kind}-email`, emailKey(email)));
  }
}

const policyFields = new Map<string, { readonly quota: number; readonly windowSeconds: number; readonly field: string }>();

/**
 * One policy's member of `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers). It is the same
 * on every response of the policy, so it is built once per quota.
 */
export function policyField(d: Decision): string {
  const known = policyFields.get(d.policy);
  if (known?.quota === d.quota && known.windowSeconds === d.windowSeconds) return known.field;
  const field = `"${d.policy}";q=${d.quota};w=${d.windowSeconds}`;
  policyFields.set(d.policy, { quota: d.quota, windowSeconds: d.windowSeconds, field });
  return field;
}

/**
 * One policy's member of `RateLimit`, as one flat string. A joined string stays in pieces in V8
 * until something needs it whole, and node:http checks every header value with a regular
 * expression, which V8 runs on a string in pieces only after a detour through its runtime (about
 * 1,000 instructions more per response). `trim()`, with no whitespace to remove, hands back the
 * string made whole, for less.
 */
export const limitField = (d: Decision): string => `"${d.policy}";r=${d.remaining};t=${d.resetSeconds}`.trim();

/** `RateLimit-Policy` and `RateLimit` on every limited response. */
function writeHeaders(decisions: readonly Decision[]): { policy: string; limit: string } {
  return { policy: decisions.map(policyField).join(', '), limit: decisions.map(limitField).join(', ') };
}

/** The RateLimit fields of a response, once per request; undefined when no limit applied. */
export function rateLimitHeaders(request: FastifyRequest): { policy: string; limit: string } | undefined {
  return request.rateLimits ? writeHeaders(request.rateLimits) : undefined;
}

/**
 * Public routes name their limits in `config.rateLimit`; the hooks are attached to those routes
 * only, so no other request pays for them. (Protected routes are limited by the guard.)
 */
export function registerRateLimits(app: FastifyInstance, limits: RequestLimits): void {
  app.decorateRequest('rateLimits', null);
  app.addHook('onRoute', (route) => {
    const kind = route.config?.rateLimit;
    if (kind === 'address') {
      route.onRequest = [...[route.onRequest ?? []].flat(), async (request: FastifyRequest) => limits.byAddress(request)];
    } else if (kind === 'login' || kind === 'signup') {
      // After validation: the submitted email is needed, and a malformed body costs nothing.
      route.preHandler = [
        ...[route.preHandler ?? []].flat(),
        async (request: FastifyRequest) => limits.byAddressAndEmail(request, kind, (request.body as { email: string }).email),
      ];
    }
  });
}
