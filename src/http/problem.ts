import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isForeignKeyViolation, isStoreUnavailable } from '../db/dialect.js';
import { applySecurityHeaders } from './headers.js';
import { type FieldError, invalidToken, PROBLEM_LIMITS, PROBLEMS, type ProblemCode, ProblemError, problemType } from '../errors.js';
import { redactQuoted } from '../lib/redact.js';
import { clip } from '../lib/text.js';

const FASTIFY_CODES: Readonly<Record<string, ProblemCode>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'validation_failed',
  FST_ERR_CTP_INVALID_JSON_BODY: 'validation_failed',
};

const BY_STATUS: Readonly<Record<number, ProblemCode>> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};
const FORMAT_NAMES: Readonly<Record<string, string>> = { 'date-time': 'an ISO 8601 date-time', uuid: 'a UUID' };

/**
 * Our own words for each Ajv error, from its keyword and the limits of our schema only. Ajv's
 * messages are a library's text (and describe the schema's internals: "must match a schema in
 * anyOf"), so like every other message of another component they never reach a client.
 */
function ruleMessage({ keyword, params }: AjvError): string {
  const limit = String(params.limit);
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be ${TYPE_NAMES[String(params.type)] ?? 'of the documented type'}`;
    case 'maxLength':
      return `must be at most ${limit} characters`;
    case 'minLength':
      return `must be at least ${limit} characters`;
    case 'maxItems':
      return `must have at most ${limit} ${limit === '1' ? 'item' : 'items'}`;
    case 'minItems':
      return `must have at least ${limit} ${limit === '1' ? 'item' : 'items'}`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'uniqueItems':
      return 'must not list an item twice';
    case 'format':
      return `must be ${FORMAT_NAMES[String(params.format)] ?? 'in the documented format'}`;
    case 'pattern':
      return 'must be in the documented format';
    case 'const':
    case 'enum':
    case 'anyOf':
    case 'oneOf':
      return 'is not one of the allowed values';
    default:
      return 'is invalid';
  }
}

const isUnion = (e: AjvError): boolean => e.keyword === 'anyOf' || e.keyword === 'oneOf';
const within = (path: string, outer: string): boolean => path === outer || path.startsWith(`${outer}/`);

/**
 * The errors that say something about the value. A union reports every branch's errors: a branch
 * refusing the value's very type says nothing (a list is not "must be an array" because another
 * branch takes arrays), and the union's own error adds nothing once a branch has said more.
 */
function telling(errors: readonly AjvError[]): AjvError[] {
  const unions = errors.filter(isUnion).map((e) => e.instancePath);
  const said = errors.filter((e) => !isUnion(e) && !(e.keyword === 'type' && unions.includes(e.instancePath)));
  return [...said, ...errors.filter((e) => isUnion(e) && !said.some((s) => within(s.instancePath, e.instancePath)))];
}

/** Names each bad field from Ajv's errors, once (the first rule it breaks): `name`, `scopes.1`, or the whole `body`. */
function fieldErrors(errors: readonly AjvError[], context: string): FieldError[] {
  const out = new Map<string, FieldError>();
  for (const e of telling(errors)) {
    const path = e.instancePath.split('/').filter(Boolean);
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    // An unknown field is named after what the client sent, which can be a token: never echo one.
    const field = path.length > 0 ? redactQuoted(path.join('.'), PROBLEM_LIMITS.text) : context;
    if (!out.has(field)) out.set(field, { field, message: ruleMessage(e) });
  }
  return [...out.values()];
}

/** Turns anything thrown into a ProblemError; unknown errors become `internal` with nothing leaked. */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  const fe = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    return new ProblemError('validation_failed', { errors: fieldErrors(fe.validation, fe.validationContext ?? 'body') });
  }
  const code = (fe.code && FASTIFY_CODES[fe.code]) ?? (fe.statusCode !== undefined ? BY_STATUS[fe.statusCode] : undefined);
  if (code) return new ProblemError(code);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) return new ProblemError('validation_failed');
  // A write for an account deleted by a transaction that committed meanwhile (an app deleted under
  // an app token's issue is answered 404 where it happens): the caller's credential went with the
  // account, as its next request would be told.
  if (isForeignKeyViolation(error)) return invalidToken();
  if (isStoreUnavailable(error)) return new ProblemError('unavailable', { headers: { 'retry-after': '5' } });
  return new ProblemError('internal');
}

const clipError = (e: FieldError): FieldError => ({ field: clip(e.field, PROBLEM_LIMITS.text), message: clip(e.message, PROBLEM_LIMITS.text) });

/**
 * The RFC 9457 body. Only catalogue text and our own details: never an internal message. Within
 * {@link PROBLEM_LIMITS}, so an error body is never much larger than the request that caused it.
 */
export function problemBody(problem: ProblemError, requestId: string): Record<string, unknown> {
  const entry = PROBLEMS[problem.code];
  return {
    type: problemType(problem.code),
    title: entry.title,
    status: entry.status,
    code: problem.code,
    detail: clip(problem.detail, PROBLEM_LIMITS.detail),
    request_id: requestId,
    ...(problem.errors ? { errors: problem.errors.slice(0, PROBLEM_LIMITS.errors).map(clipError) } : {}),
    ...problem.extensions,
  };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemError): FastifyReply {
  // What the answer was, for the metrics counted once it is sent (src/observability/metrics/http.ts).
  request.problemCode = problem.code;
  // Framework errors skip onRequest hooks, so the security headers are (re)applied here.
  applySecurityHeaders(reply);
  return reply
    .code(problem.status)
    .headers(problem.headers)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send(problemBody(problem, request.id));
}

/**
 * Says what a caller meant by a refused value, when something knows better than the schema (a scope
 * meant for the other token type): a message for `field` holding `value`, or undefined.
 */
export type ExplainField = (field: string, value: unknown, message: string) => string | undefined;

/** The value at a field path such as `scopes.1` of a parsed body; undefined when there is none. */
function valueAt(body: unknown, field: string): unknown {
  let value = body;
  for (const key of field.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const DATE_TIME_REFUSED = `must be ${FORMAT_NAMES['date-time']}`;

/** A date alone where a date-time is asked, the likeliest mistake: RFC 3339 section 5.6 needs the time and its offset. */
function dateOnly(value: unknown, message: string): string | undefined {
  if (message !== DATE_TIME_REFUSED || typeof value !== 'string' || !/^\d{4}-\d\d-\d\d$/.test(value)) return undefined;
  return `must be a date-time with a time zone, such as ${value}T00:00:00Z; a date alone is not accepted`;
}

/** A body left out altogether: what the operation needs, from its schema's required fields. */
function missingBody(request: FastifyRequest): string {
  const schema = request.routeOptions.schema?.body as { required?: readonly string[] } | undefined;
  const fields = (schema?.required ?? []).map((f) => `"${f}": …`).join(', ');
  return `is missing: ${request.method} ${request.routeOptions.url ?? ''} needs a JSON body {${fields}}`;
}

/** `problem` with each field error `explain` knows more about reworded, and a missing body named as such. */
function explained(problem: ProblemError, request: FastifyRequest, explain: ExplainField = () => undefined): ProblemError {
  const absent = request.body === undefined || request.body === null;
  const explainOne: ExplainField = (field, value, message) => dateOnly(value, message) ?? explain(field, value, message);
  const errors = problem.errors?.map((e) => ({
    field: e.field,
    message: (e.field === 'body' && absent ? missingBody(request) : explainOne(e.field, valueAt(request.body, e.field), e.message)) ?? e.message,
  }));
  return errors ? new ProblemError('validation_failed', { errors }) : problem;
}

/**
 * The one place where errors become responses. A context whose routes take other bodies than JSON
 * (forms) says so in its `415` detail.
 */
export function registerProblemHandler(app: FastifyInstance, options: { readonly mediaTypes?: string; readonly explain?: ExplainField } = {}): void {
  if (!app.hasRequestDecorator('problemCode')) app.decorateRequest('problemCode', null);
  app.setErrorHandler((error, request, reply) => {
    let problem = toProblem(error);
    if (problem.code === 'validation_failed' && Array.isArray((error as { validation?: unknown }).validation)) {
      problem = explained(problem, request, options.explain);
    }
    if (options.mediaTypes && problem.code === 'unsupported_media_type' && problem.detail === PROBLEMS.unsupported_media_type.detail) {
      problem = new ProblemError('unsupported_media_type', { detail: options.mediaTypes });
    }
    if (problem.status >= 500) request.log.error({ err: error }, problem.code === 'unavailable' ? 'store unavailable' : 'request failed');
    return sendProblem(request, reply, problem);
  });
}
