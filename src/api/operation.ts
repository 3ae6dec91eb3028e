import type { TNull, TSchema } from 'typebox';
import type { ProblemCode } from '../errors.js';
import { responsesOf, type Successes } from './responses.js';
import type { RouteAuth, RouteRateLimit } from './route.js';
import { securityOf, type SecurityRequirement } from './security.js';
import { ENROLMENT_OPERATIONS } from './enrolment-operations.js';
import { STEP_UP_OPERATIONS } from './step-up-operations.js';

/** The document's tags, in the order the docs page shows them. */
export const TAGS = {
  auth: 'Signup, login, logout',
  account: 'The signed-in user\'s password, sessions, email and account',
  me: 'The caller',
  tokens: 'API tokens',
  apps: 'Apps and app tokens',
  keys: 'Public signing keys',
  scopes: 'The scopes tokens can carry: rz-auth\'s own and the platform\'s',
  audit: 'Your security log: the audit events of your account',
  webhooks: 'Webhooks: your security events, sent to your endpoints as they happen',
  leaks: 'Leak response: reporting leaked tokens, and the token formats scanners look for',
  platform: 'For the platform\'s services, with a service credential: introspection and the event stream',
  oauth: 'OAuth for CLIs: device authorization (RFC 8628), revocation (RFC 7009), metadata (RFC 8414)',
  device: 'Approving a device login: the device page\'s API',
  operations: 'Health and readiness probes',
} as const;

export type Tag = keyof typeof TAGS;

/** Marks, in a route's schema, a body the request may leave out (http/docs.ts says so in the document). */
export const OPTIONAL_BODY = 'x-optional-body';

/** The verbs an operationId may start with; a generated client's method reads as what it does. */
export const VERBS = ['get', 'list', 'create', 'register', 'issue', 'revoke', 'delete', 'update', 'rotate', 'sign', 'log', 'check', 'introspect', 'stream', 'report', 'send', 'request', 'confirm', 'approve', 'deny', 'lookUp'] as const;

/** A stable, verb-first operationId: `createApiToken`, `listApps`. */
export type OperationId = `${(typeof VERBS)[number]}${Capitalize<string>}`;

/**
 * Who may call an operation. Protected routes name the tokens the guard lets in and are limited
 * per credential, and by the login limits too when they check the user's password (`password`);
 * public routes name the limit they fall under, `none` only for probes.
 */
type Access =
  | { readonly auth: RouteAuth; readonly rateLimit?: 'password' | 'verify-email' }
  | { readonly auth: 'public'; readonly rateLimit: Exclude<RouteRateLimit, 'password' | 'verify-email'> | 'none' };

/** The methods the API's operations use. */
export type OperationMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export type OperationSpec = Access & {
  /** The route's own method, checked against it at registration (http/docs.ts). */
  readonly method: OperationMethod;
  readonly operationId: OperationId;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly [Tag, ...Tag[]];
  readonly body?: TSchema;
  /** The body may be left out; when one is sent (as JSON) it must match `body`. */
  readonly optionalBody?: true;
  /** The body's media types, when not JSON alone. */
  readonly consumes?: readonly string[];
  /** Request headers the operation reads. */
  readonly headers?: TSchema;
  /** Query parameters: an object of strings (nothing is coerced). */
  readonly querystring?: TSchema;
  readonly params?: TSchema;
  readonly success: Successes;
  /** What the operation itself can answer; what the guard, body parser and limits answer is added. */
  readonly problems?: readonly ProblemCode[];
  /** Mints a token: refused with `email_unverified` while EMAIL_VERIFICATION_REQUIRED holds and the email is unproven. */
  readonly mintsToken?: true;
};

type ResponseSchemas<R extends Successes> = { readonly [K in keyof R]: R[K] extends { readonly schema: infer S extends TSchema } ? S : TNull };

/** The request schemas the spec gives, and no key for one it does not (Fastify warns of an empty one). */
type RequestSchemas<S extends OperationSpec> = (S extends { readonly body: infer B } ? { readonly body: B } : unknown) &
  (S extends { readonly params: infer P } ? { readonly params: P } : unknown) &
  (S extends { readonly headers: infer H } ? { readonly headers: H } : unknown) &
  (S extends { readonly querystring: infer Q } ? { readonly querystring: Q } : unknown);

/** The parts of Fastify route options that {@link operation} fills in. */
export interface Operation<S extends OperationSpec> {
  readonly config: { readonly operationId: OperationId; readonly method: OperationMethod; readonly auth?: RouteAuth; readonly rateLimit?: RouteRateLimit; readonly mintsToken?: true };
  readonly schema: RequestSchemas<S> & {
    readonly operationId: OperationId;
    readonly summary: string;
    readonly description: string;
    readonly tags: readonly Tag[];
    readonly security: SecurityRequirement[];
    /** Typed by the successes only: problems are sent by the error handler, never by a handler. */
    readonly response: ResponseSchemas<S['success']>;
  };
}

/** The problems the machinery answers for every operation of its kind. */
function problemsOf(spec: OperationSpec): Set<ProblemCode> {
  const problems = new Set<ProblemCode>(spec.problems);
  // More than one Authorization header is 400 invalid_request (RFC 6750); then the guard's answers.
  if (spec.auth !== 'public') for (const code of ['validation_failed', 'unauthorized', 'invalid_token', 'insufficient_scope'] as const) problems.add(code);
  // An API operation that takes no body refuses one (http/hardening.ts): any but `{}` where it is
  // read, any at all on a GET, whose body is never read but told from its headers. The probes (the
  // only operations outside the API's paths, and the only ones without a rate limit) take anything.
  if (spec.body || spec.method !== 'GET' || spec.rateLimit !== 'none') for (const code of ['validation_failed', 'unsupported_media_type', 'payload_too_large'] as const) problems.add(code);
  if (spec.querystring) problems.add('validation_failed');
  // A malformed id is answered like an unknown one.
  if (spec.params) problems.add('not_found');
  if (spec.auth !== 'public' || spec.rateLimit !== 'none') problems.add('rate_limited');
  if (spec.mintsToken) problems.add('email_unverified');
  if (STEP_UP_OPERATIONS.has(spec.operationId)) problems.add('insufficient_user_authentication');
  // MFA_REQUIRED: a user token good only for enrolment opens nothing else.
  if (spec.auth !== 'public' && !spec.auth.service && !ENROLMENT_OPERATIONS.has(spec.operationId)) problems.add('mfa_enrollment_required');
  problems.add('internal');
  return problems;
}

/**
 * Every documented route is declared through this: one declaration gives the guard and the rate
 * limits their config, and the document the operation's security and every response the service
 * can send, so the two cannot disagree. Spread it into the route options beside the handler.
 */
export function operation<const S extends OperationSpec>(spec: S): Operation<S> {
  const isPublic = spec.auth === 'public';
  const limit = spec.rateLimit;
  const response = responsesOf({
    success: spec.success,
    problems: problemsOf(spec),
    limited: !isPublic || limit !== 'none',
    challenged: !isPublic,
  }) as unknown as ResponseSchemas<S['success']>;
  return {
    config: {
      operationId: spec.operationId,
      method: spec.method,
      ...(spec.auth === 'public' ? {} : { auth: spec.auth }),
      ...(limit === undefined || limit === 'none' ? {} : { rateLimit: limit }),
      ...(spec.mintsToken ? { mintsToken: true } : {}),
    },
    schema: {
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.description,
      tags: spec.tags,
      security: spec.auth === 'public' ? [] : securityOf(spec.auth),
      // Fastify validates a body given by media type only when one of that type is sent.
      ...(spec.body ? { body: spec.optionalBody ? { content: { 'application/json': { schema: spec.body } } } : spec.body } : {}),
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.optionalBody ? { [OPTIONAL_BODY]: true } : {}),
      ...(spec.consumes ? { consumes: [...spec.consumes] } : {}),
      ...(spec.headers ? { headers: spec.headers } : {}),
      ...(spec.querystring ? { querystring: spec.querystring } : {}),
      response,
    } as Operation<S>['schema'],
  };
}
