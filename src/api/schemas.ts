import { Type } from 'typebox';
import { PROBLEMS, type ProblemCode } from '../errors.js';

/*
 * Shared schemas. Each feeds validation, response serialization (which keeps anything not listed
 * off the wire), the OpenAPI document and, through Static<>, the TypeScript types.
 */

export const Uuid = Type.String({ format: 'uuid', examples: ['0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'] });
export const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 in UTC with a Z suffix.',
  examples: ['2026-11-21T09:30:00.000Z'],
});
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const FieldErrorSchema = Type.Object(
  { field: Type.String(), message: Type.String() },
  { additionalProperties: false },
);

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A page of these docs that explains the problem.', examples: ['/problems/invalid-token'] }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.Union(
      Object.keys(PROBLEMS).map((code) => Type.Literal(code)),
      { description: 'Stable, machine-readable error code.' },
    ),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'Each bad field (validation_failed only).' })),
  },
  {
    $id: 'Problem',
    title: 'Problem',
    description: 'RFC 9457 problem details, sent as application/problem+json.',
    additionalProperties: false,
  },
);

export const ProblemRef = Type.Ref('Problem');

/** Headers on every response of a rate-limited operation (draft-ietf-httpapi-ratelimit-headers). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description: 'One item per limit that applies: `"<policy>";q=<quota>;w=<window in seconds>`.',
    examples: ['"credential";q=1200;w=60'],
  },
  RateLimit: {
    type: 'string',
    description: 'One item per limit that applies: `"<policy>";r=<remaining>;t=<seconds until the window resets>`.',
    examples: ['"credential";r=1187;t=42'],
  },
} as const;

const RETRY_AFTER = { 'Retry-After': { type: 'string', description: 'Seconds to wait before retrying.' } } as const;

/**
 * The responses of a rate-limited operation: its success schemas and the problems it can return
 * (always including 429), each documented with the RateLimit headers.
 */
export function responses<S extends Record<number, object>>(success: S, ...codes: ProblemCode[]): S {
  const out: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(success)) out[Number(status)] = { ...schema, headers: RATE_LIMIT_HEADERS };
  for (const code of [...codes, 'rate_limited' as const]) {
    const { status } = PROBLEMS[code];
    const existing = out[status] as { description: string } | undefined;
    const description = existing ? `${existing.description}; ${code}` : `Problem: ${code}`;
    const headers = code === 'rate_limited' ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS;
    out[status] = { description, headers, content: { 'application/problem+json': { schema: ProblemRef } } };
  }
  return out as S;
}

/** Any failure an operation does not list (500 internal, 503 unavailable): a problem body all the same. */
export const DEFAULT_PROBLEM = {
  description: 'Problem: any other failure, e.g. internal or unavailable (with Retry-After).',
  content: { 'application/problem+json': { schema: ProblemRef } },
} as const;

export const UserSummary = Type.Object(
  {
    id: Uuid,
    username: Type.String({ examples: ['ada'] }),
    email: Type.String({ format: 'email', examples: ['ada@example.com'] }),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ description: 'A UUID. Anything else is 404.' }) });
