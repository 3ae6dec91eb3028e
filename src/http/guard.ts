import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAuth } from '../api/route.js';
import { ENROLMENT_OPERATIONS } from '../api/enrolment-operations.js';
import { STEP_UP_OPERATIONS } from '../api/step-up-operations.js';
import { CHILD_OPERATIONS } from '../api/child-operations.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Caller } from '../auth/principal.js';
import { insufficientScope, ProblemError, SERVICE_SCOPE } from '../errors.js';
import type { AuthDecisions, DecisionOutcome, DecisionType } from '../observability/metrics/auth.js';
import { networkRefusal } from '../auth/authenticator.js';
import { ATTR, NO_TRACING, type Tracing } from '../observability/tracing/tracing.js';
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

const COUNTED: Readonly<Record<string, DecisionOutcome>> = { invalid_token: 'invalid_token', unauthorized: 'invalid_token', insufficient_scope: 'insufficient_scope', rate_limited: 'rate_limited' };

/**
 * The decision a refusal stands for, with the credential type when one was recognised; nothing
 * for what is no decision about the caller (a store that cannot be reached).
 */
function countRefusal(decisions: AuthDecisions, caller: Caller | undefined, error: unknown): void {
  const outcome = error instanceof ProblemError ? COUNTED[error.code] : undefined;
  if (outcome === undefined) return;
  const refusedType = networkRefusal(error);
  if (refusedType) decisions.decided(refusedType, 'network_refused');
  else decisions.decided(decisionType(caller), outcome);
}

/** A child counts as `derived` (contract §10), whatever its parent's type. */
const decisionType = (caller: Caller | null | undefined): DecisionType => (caller === null || caller === undefined ? 'none' : 'derived' in caller && caller.derived ? 'derived' : caller.type);

/** What the guard decided, on the request's span: the credential's type (never the credential) and the outcome. */
function traceDecision(tracing: Tracing, request: FastifyRequest, principal: Caller | null, error: unknown): void {
  const outcome = error === null ? 'ok' : error instanceof ProblemError ? error.code : 'error';
  tracing.annotateRequest(request.raw, { [ATTR.tokenType]: principal?.type ?? 'none', [ATTR.outcome]: outcome });
}

/** What watches the guard's decisions: a count per outcome (metrics) and the request's span (traces). */
export interface GuardObservers {
  readonly decisions?: AuthDecisions | null;
  readonly tracing?: Tracing;
}

/**
 * Authenticates, rate-limits and authorizes the routes that declare `config.auth`, in onRequest:
 * before the body is read, so anonymous callers cannot make the server parse anything. The hook is
 * attached to those routes only. It is written with callbacks, not async: a caller the caches know
 * is authenticated at once, and every protected request would otherwise pay for the promises.
 */
export function registerGuard(app: FastifyInstance, authenticator: Authenticator, limits: RequestLimits, clientAddress: (req: IncomingMessage) => string, observers: GuardObservers = {}): void {
  const { decisions = null, tracing = NO_TRACING } = observers;
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) return;
    const operationId = route.config?.operationId;
    // On a step-up route the admitted caller's decision is the step-up check's (src/account/mfa/step-up.ts).
    const decidedLater = operationId !== undefined && STEP_UP_OPERATIONS.has(operationId);
    // The one list the OpenAPI document is written from (api/operation.ts), so the two cannot disagree.
    const enrolment = operationId !== undefined && ENROLMENT_OPERATIONS.has(operationId);
    const childAllowed = operationId !== undefined && CHILD_OPERATIONS.has(operationId);
    // Each guarded request counts one decision (metrics) and puts it on its span (traces): the one the guard answered.
    const refused = (request: FastifyRequest, caller: Caller | undefined, error: Error, done: (error?: Error) => void): void => {
      if (decisions) countRefusal(decisions, caller, error);
      if (tracing.enabled) traceDecision(tracing, request, caller ?? null, error);
      done(error);
    };
    const admit = (request: FastifyRequest, principal: Caller, done: (error?: Error) => void): void => {
      limits.countCredential(request, principal, auth.counter, (limited) => {
        if (limited) {
          refused(request, principal, limited, done);
          return;
        }
        try {
          authorize(principal, auth);
          if (principal.type !== 'service' && principal.derived && !childAllowed) throw insufficientScope(neededScope(auth));
          // MFA_REQUIRED: a token with the enrolment audience opens the enrolment routes only (contract §12.7).
          if (principal.type === 'user' && principal.enrollOnly && !enrolment) throw new ProblemError('mfa_enrollment_required');
        } catch (error) {
          refused(request, principal, error as Error, done);
          return;
        }
        if (!decidedLater) decisions?.decided(decisionType(principal), 'ok');
        if (auth.api !== undefined && auth.api !== 'any' && principal.type === 'api_token') authenticator.exercised(principal, auth.api);
        request.principal = principal;
        if (tracing.enabled) traceDecision(tracing, request, principal, null);
        done();
      });
    };
    // Failed authentication counts against the client address, so token guessing is throttled.
    const refuse = (request: FastifyRequest, error: unknown, done: (error?: Error) => void): void => {
      limits.byAddress(request).then(
        () => refused(request, undefined, error as Error, done),
        (limited: Error) => refused(request, undefined, limited, done),
      );
    };
    const guard = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
      let principal: Caller | Promise<Caller>;
      try {
        // The address the rate limiter counts: a token's allow-list is checked against it.
        principal = authenticator.authenticate(readBearerToken(request.raw), clientAddress(request.raw));
      } catch (error) {
        refuse(request, error, done);
        return;
      }
      if (principal instanceof Promise) {
        principal.then(
          (caller) => admit(request, caller, done),
          (error: unknown) => refuse(request, error, done),
        );
      } else admit(request, principal, done);
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), guard];
  });
}
