import { type TSchema, Type } from 'typebox';
import { PROBLEMS, type ProblemCode, problemType } from '../errors.js';
import { MAX_WINDOW_SECONDS } from '../ratelimit/policies.js';
import { ProblemRef } from './schemas.js';

/** A success response of an operation; without a schema it has no body (204). */
export interface Success {
  readonly description: string;
  readonly schema?: TSchema;
  /** The body's media type, when it is not JSON (an event stream). */
  readonly mediaType?: string;
}

export type Successes = Readonly<Partial<Record<200 | 201 | 202 | 204, Success>>>;

/** What decides the responses an operation documents besides its successes. */
export interface ResponsePlan {
  readonly success: Successes;
  /** Every problem it can answer, by code; statuses that share a code are merged. */
  readonly problems: ReadonlySet<ProblemCode>;
  /** Counted against a rate limit: the RateLimit fields on its responses. */
  readonly limited: boolean;
  /** Behind the guard: an RFC 6750 challenge on its 400, 401 and 403. */
  readonly challenged: boolean;
}

const counted = 'Sent when the request was counted against a rate limit: not while limits are off, nor for a request refused before it was counted.';
const policyItem = '"[a-z-]+";q=[0-9]+;w=[0-9]+';
const limitItem = '"[a-z-]+";r=[0-9]+;t=[0-9]+';

/** draft-ietf-httpapi-ratelimit-headers: one item per limit that applied to the request. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    maxLength: 256,
    pattern: `^${policyItem}(, ${policyItem})*$`,
    description: `Each limit that applies: \`"<policy>";q=<quota>;w=<window in seconds>\`. ${counted}`,
    examples: ['"credential";q=1200;w=60'],
  },
  RateLimit: {
    type: 'string',
    maxLength: 256,
    pattern: `^${limitItem}(, ${limitItem})*$`,
    description: `What remains of each limit: \`"<policy>";r=<remaining>;t=<seconds until the window resets>\`. ${counted}`,
    examples: ['"credential";r=1187;t=42'],
  },
} as const;

const RETRY_AFTER = {
  'Retry-After': { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_WINDOW_SECONDS, description: 'Seconds to wait before retrying.', examples: [42] },
} as const;

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    type: 'string',
    maxLength: 256,
    pattern: '^Bearer realm="rz"(, error="[a-z_]+")?(, scope="[^"]*")?(, max_age="[0-9]+")?$',
    description: 'RFC 6750 challenge: `error` says what was wrong with the token (`invalid_request` for more than one Authorization header); `scope` the scope needed, `*` for a user token; `max_age` (RFC 9470, with `insufficient_user_authentication`) the seconds within which the user must have authenticated.',
    examples: ['Bearer realm="rz", error="insufficient_scope", scope="apps:write"'],
  },
} as const;

/** Every response header the document declares, by name: each is written out once, in components. */
export const RESPONSE_HEADERS: Readonly<Record<string, { readonly description: string }>> = { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER, ...WWW_AUTHENTICATE };

const EXAMPLE_REQUEST_ID = '5f0c6a9e-3b1d-4f7a-8e2c-9d4b1a7c3e60';

/** A problem body as the service sends it for `code`, with the catalogue's own words. */
function exampleProblem(code: ProblemCode): object {
  const { title, status, detail } = PROBLEMS[code];
  const errors = code === 'validation_failed' ? { errors: [{ field: 'name', message: 'must not be empty' }] } : {};
  return { type: problemType(code), title, status, code, detail, request_id: EXAMPLE_REQUEST_ID, ...errors };
}

function problemResponse(codes: readonly ProblemCode[], headers: object): object {
  const examples = Object.fromEntries(codes.map((code) => [code, { summary: PROBLEMS[code].title, value: exampleProblem(code) }]));
  return {
    description: codes.map((code) => `${PROBLEMS[code].title} (\`${code}\`)`).join('; '),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/problem+json': { schema: ProblemRef, examples } },
  };
}

/**
 * The `response` schemas of an operation: its successes, one problem+json response per status it
 * can answer (with the headers that status carries) and `default` for anything else.
 */
export function responsesOf(plan: ResponsePlan): Record<string, object> {
  const limits = plan.limited ? RATE_LIMIT_HEADERS : {};
  const out: Record<string, object> = {};
  for (const [status, success] of Object.entries(plan.success)) {
    const headers = plan.limited ? { headers: limits } : {};
    out[status] = success.mediaType
      ? { description: success.description, ...headers, content: { [success.mediaType]: { schema: success.schema ?? Type.Null() } } }
      : { ...(success.schema ?? Type.Null()), description: success.description, ...headers };
  }
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of plan.problems) byStatus.set(PROBLEMS[code].status, [...(byStatus.get(PROBLEMS[code].status) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const challenge = plan.challenged && (status === 400 || status === 401 || status === 403) ? WWW_AUTHENTICATE : {};
    out[status] = problemResponse(codes, { ...limits, ...(status === 429 ? RETRY_AFTER : {}), ...challenge });
  }
  out.default = {
    description:
      'Any other problem: 503 `unavailable` while the database or Redis cannot be reached, 408 `request_timeout` for a request that did not arrive whole within 10 s, 431 `headers_too_large` for headers over 16 KiB.',
    content: { 'application/problem+json': { schema: ProblemRef } },
  };
  return out;
}
