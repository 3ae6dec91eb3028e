import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type OAuthRateLimit, principalOf } from '../api/route.js';
import type { Caller } from '../auth/principal.js';
import { ProblemError } from '../errors.js';
import { addressKey } from '../ratelimit/address.js';
import { type Decision, emailKey, type RateLimiter } from '../ratelimit/limiter.js';
import type { PolicyName } from '../ratelimit/policies.js';
import { normalizeEmail } from '../account/user-service.js';
import type { RejectionCount } from '../observability/metrics/ratelimit.js';

declare module 'fastify' {
  interface FastifyRequest {
    rateLimits: Decision[] | null;
  }
}

const rateLimited = (decision: Decision) => new ProblemError('rate_limited', { headers: { 'retry-after': String(decision.resetSeconds) } });

/** The bucket of an authenticated caller: the user for user tokens, the token or service credential otherwise. */
function credentialKey(caller: Caller): string {
  if (caller.type === 'user') return `user:${caller.user.id}`;
  return caller.type === 'service' ? `service:${caller.credentialId}` : `token:${caller.credentialId}`;
}

/**
 * The bucket keys of callers the authenticator's caches hand out again request after request: one
 * string per caller, whose hash the counters' maps then compute once.
 */
const credentialKeys = new WeakMap<Caller, string>();
function cachedCredentialKey(caller: Caller): string {
  let key = credentialKeys.get(caller);
  if (key === undefined) credentialKeys.set(caller, (key = credentialKey(caller)));
  return key;
}

/** Counts requests against the policies and records the decisions for the response headers. */
export class RequestLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly clientAddress: (req: IncomingMessage) => string,
    private readonly rejections: RejectionCount | null = null,
  ) {}

  /** Counts one request (or `points`); @throws rate_limited (with Retry-After) when the policy is spent. */
  async enforce(request: FastifyRequest, policy: PolicyName, key: string, points = 1): Promise<void> {
    this.apply(request, await this.limiter.consume(policy, key, points));
  }

  /** Records a decision; @throws rate_limited when it refused the request. */
  private apply(request: FastifyRequest, decision: Decision | null): void {
    const refused = this.record(request, decision);
    if (refused) throw refused;
  }

  /** Records a decision; returns the rate_limited problem when it refused the request. */
  private record(request: FastifyRequest, decision: Decision | null): ProblemError | undefined {
    if (decision === null) return undefined;
    const decisions = (request.rateLimits ??= []);
    // A weighted request counts its policy twice (rateLimitWeight): the headers show the later count.
    const same = decisions.findIndex((d) => d.policy === decision.policy);
    if (same === -1) decisions.push(decision);
    else decisions[same] = decision;
    if (decision.allowed) return undefined;
    this.rejections?.(decision.policy);
    return rateLimited(decision);
  }

  /** Counts one request of the client address (or `points`), under the general policy or a route's own. */
  byAddress(request: FastifyRequest, policy: 'address' | 'leak-report' | 'login-address' | 'passkey-address' | OAuthRateLimit = 'address', points = 1): Promise<void> {
    return this.enforce(request, policy, this.addressOf(request), points);
  }

  /**
   * Counts one request of an authenticated caller, a platform service under its own policy, under
   * the route's `counter` when it has one, then calls `done` with nothing, or with rate_limited or
   * the store's failure (unavailable). Callback style, straight from the limiter: the guard runs on
   * every protected request, and this saves it the promises and microtask turns of an await.
   */
  countCredential(request: FastifyRequest, caller: Caller, counter: string | undefined, done: (error?: Error) => void): void {
    const key = counter === undefined ? cachedCredentialKey(caller) : `${cachedCredentialKey(caller)}:${counter}`;
    // A derived child charges its parent's own bucket (its credential id is the parent's), then each `rl` caveat's.
    const children = caller.type === 'service' ? undefined : caller.derived;
    this.limiter.count(
      caller.type === 'service' ? 'service' : 'credential',
      key,
      (decision) => {
        const refused = this.record(request, decision);
        if (refused || !children?.rl.length) done(refused);
        else this.countChild(request, children.childId, children.rl, 0, done);
      },
      done,
    );
  }

  /** Each distinct `rl` caveat of a child from the `i`th, one bucket per quota keyed by the child id (policy `child`, contract §14.5). */
  private countChild(request: FastifyRequest, childId: string, rl: readonly { readonly q: number; readonly w: number }[], i: number, done: (error?: Error) => void): void {
    const limit = rl[i];
    if (limit === undefined) return done();
    if (rl.slice(0, i).some((l) => l.q === limit.q && l.w === limit.w)) return this.countChild(request, childId, rl, i + 1, done);
    this.limiter.countChild(
      childId,
      { quota: limit.q, windowSeconds: limit.w },
      (decision) => {
        const refused = this.record(request, decision);
        if (refused) done(refused);
        else this.countChild(request, childId, rl, i + 1, done);
      },
      done,
    );
  }

  private addressOf(request: FastifyRequest): string {
    return addressKey(this.clientAddress(request.raw));
  }

  /**
   * Login and signup: per address, then per submitted email whether or not an account exists, so
   * the limit never tells which emails are registered. The email is counted only for requests the
   * address limit admitted: a client refused by it can neither charge someone's email nor make the
   * server keep a counter for each email it makes up. A refused response then names the address
   * limit alone, the only one that applied.
   */
  async byAddressAndEmail(request: FastifyRequest, kind: 'login' | 'signup' | 'password-reset', email: string): Promise<void> {
    this.apply(request, await this.limiter.consume(`${kind}-address`, this.addressOf(request)));
    this.apply(request, await this.limiter.consume(`${kind}-email`, emailKey(normalizeEmail(email))));
  }
}

/** One policy's member of `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers). */
const policyField = (d: Decision): string => `"${d.policy}";q=${d.quota};w=${d.windowSeconds}`;

/** One policy's member of `RateLimit`. */
const limitField = (d: Decision): string => `"${d.policy}";r=${d.remaining};t=${d.resetSeconds}`;

/**
 * The `RateLimit-Policy` of the last single decision seen: nearly every answer names one policy,
 * and the same one as the answer before it, so the field is made once, not once per answer.
 */
let lastPolicy: { policy: string; quota: number; windowSeconds: number; field: string } | undefined;
function policyFieldOf(d: Decision): string {
  const last = lastPolicy;
  if (last !== undefined && last.policy === d.policy && last.quota === d.quota && last.windowSeconds === d.windowSeconds) return last.field;
  const field = policyField(d);
  lastPolicy = { policy: d.policy, quota: d.quota, windowSeconds: d.windowSeconds, field };
  return field;
}

/** Sets `RateLimit-Policy` and `RateLimit` for the decisions taken on a request; none when no limit applied. */
export function setRateLimitHeaders(reply: FastifyReply, decisions: readonly Decision[] | null): void {
  if (!decisions || decisions.length === 0) return;
  if (decisions.length === 1) {
    const d = decisions[0] as Decision;
    reply.header('ratelimit-policy', policyFieldOf(d));
    reply.header('ratelimit', limitField(d));
    return;
  }
  reply.header('ratelimit-policy', decisions.map(policyField).join(', '));
  reply.header('ratelimit', decisions.map(limitField).join(', '));
}

/**
 * Public routes name their limits in `config.rateLimit`; the hooks are attached to those routes
 * only, so no other request pays for them. (Protected routes are limited by the guard.)
 */
export function registerRateLimits(app: FastifyInstance, limits: RequestLimits): void {
  app.decorateRequest('rateLimits', null);
  app.addHook('onRoute', (route) => {
    const kind = route.config?.rateLimit;
    if (kind === 'address' || kind === 'leak-report') {
      route.onRequest = [...[route.onRequest ?? []].flat(), async (request: FastifyRequest) => limits.byAddress(request, kind)];
      const weight = route.config?.rateLimitWeight;
      // The request itself was counted before its body was read; the rest of its cost once it is valid.
      if (weight) {
        route.preHandler = [
          ...[route.preHandler ?? []].flat(),
          async (request: FastifyRequest) => {
            const extra = weight(request.body) - 1;
            if (extra > 0) await limits.byAddress(request, kind, extra);
          },
        ];
      }
    } else if (kind === 'device-authorization' || kind === 'device-token' || kind === 'oauth-revoke') {
      route.onRequest = [...[route.onRequest ?? []].flat(), async (request: FastifyRequest) => limits.byAddress(request, kind)];
    } else if (kind === 'second-factor') {
      // The second step of a login has no email: the login limit per address applies (contract §12.6).
      route.onRequest = [...[route.onRequest ?? []].flat(), async (request: FastifyRequest) => limits.byAddress(request, 'login-address')];
    } else if (kind === 'passkey-options') {
      // Each answer stores a challenge: 20 per minute per address (contract §12.6).
      route.onRequest = [...[route.onRequest ?? []].flat(), async (request: FastifyRequest) => limits.byAddress(request, 'passkey-address')];
    } else if (kind === 'login' || kind === 'signup' || kind === 'password-reset') {
      // After validation: the submitted email is needed, and a malformed body costs nothing.
      route.preHandler = [
        ...[route.preHandler ?? []].flat(),
        async (request: FastifyRequest) => limits.byAddressAndEmail(request, kind, (request.body as { email: string }).email),
      ];
    } else if (kind === 'password') {
      // A password check by a signed-in user is a login attempt: the same limits, under the
      // account's own email, so a stolen user token cannot be used to guess the password faster.
      route.preHandler = [
        ...[route.preHandler ?? []].flat(),
        async (request: FastifyRequest) => limits.byAddressAndEmail(request, 'login', principalOf(request).user.email),
      ];
    } else if (kind === 'verify-email') {
      // Each request queues a mail to the user's own address: counted per user, whatever the token.
      route.preHandler = [...[route.preHandler ?? []].flat(), async (request: FastifyRequest) => limits.enforce(request, 'verify-email', `user:${principalOf(request).user.id}`)];
    }
  });
}
