import { AUTH_METHODS } from '../lib/amr.js';
import { type TArray, type TNull, type TObject, type TSchema, type TString, type TUnion, Type } from 'typebox';
import { PROBLEM_LIMITS, PROBLEMS, type ProblemCode } from '../errors.js';
import { DEFAULT_PAGE, MAX_CURSOR_LENGTH, MAX_PAGE } from '../lib/pages.js';
import { MAX_CIDR_LENGTH, MAX_CIDRS } from '../tokens/cidrs.js';
import { MAX_SCOPE_NAME_LENGTH, MAX_TOKEN_SCOPES, SCOPE_NAME } from '../tokens/scopes.js';
import { USERNAME } from '../account/user-service.js';

/*
 * Shared schemas. Each feeds validation, response serialization (which keeps anything not listed
 * off the wire), the OpenAPI document and, through Static<>, the TypeScript types. Every string
 * and array states its bound, so the document says what the service enforces.
 */

export const Uuid = Type.String({ format: 'uuid', maxLength: 36, examples: ['0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'] });

/** What toISOString() writes: 24 characters, or 27 for a year past 9999. */
export const Timestamp = Type.String({
  format: 'date-time',
  maxLength: 27,
  description: 'ISO 8601 in UTC with a Z suffix.',
  examples: ['2026-11-21T09:30:00.000Z'],
});
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** A token or app name as stored: trimmed, 1 to 100 characters. */
export const Label = Type.String({ minLength: 1, maxLength: 100 });

/** A scope's name: rz-auth's own or the platform's (SCOPES_FILE). */
export const ScopeName = Type.String({ pattern: `^${SCOPE_NAME}$`, maxLength: MAX_SCOPE_NAME_LENGTH, examples: ['apps:read'] });

/** A token's scopes as responses show them, built-in and platform ones. */
export const ScopeNames = Type.Array(ScopeName, {
  uniqueItems: true,
  maxItems: MAX_TOKEN_SCOPES,
});

const FieldErrorSchema = Type.Object(
  {
    field: Type.String({ maxLength: PROBLEM_LIMITS.text, description: 'The bad field (`name`, `scopes.1`), or `body` for the whole body.', examples: ['name'] }),
    message: Type.String({ maxLength: PROBLEM_LIMITS.text, examples: ['must not be empty'] }),
  },
  { additionalProperties: false },
);

const CODES = Object.keys(PROBLEMS) as ProblemCode[];

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri-reference', maxLength: 64, description: 'A page of these docs that explains the problem.', examples: ['/problems/invalid-token'] }),
    title: Type.Enum([...new Set(CODES.map((code) => PROBLEMS[code].title))], { description: 'The title of the problem type.' }),
    status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599, examples: [401] }),
    code: Type.Enum(CODES, { description: 'Stable, machine-readable error code.' }),
    detail: Type.String({ maxLength: PROBLEM_LIMITS.detail }),
    request_id: Type.String({ format: 'uuid', maxLength: 36, description: 'Also sent as the X-Request-Id header; quote it when reporting a problem.' }),
    errors: Type.Optional(
      Type.Array(FieldErrorSchema, { maxItems: PROBLEM_LIMITS.errors, description: 'Each bad field (validation_failed only), at most the first 20.' }),
    ),
    mfa_token: Type.Optional(
      Type.String({ minLength: 43, maxLength: 43, pattern: '^[A-Za-z0-9_-]+$', description: '`mfa_required` only: send it to POST /api/auth/mfa/verify. Single-use, no bearer token.' }),
    ),
    methods: Type.Optional(
      Type.Array(Type.Enum(['totp', 'webauthn', 'recovery_code']), { uniqueItems: true, maxItems: 3, description: '`mfa_required` only: the second factors the user has.' }),
    ),
    expires_in: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 300, description: '`mfa_required` only: seconds the `mfa_token` lives.' })),
  },
  {
    $id: 'Problem',
    title: 'Problem',
    description: 'RFC 9457 problem details, sent as application/problem+json.',
    additionalProperties: false,
  },
);

export const ProblemRef = Type.Ref('Problem');

/** RFC 8176 authentication methods of a user token (contract §12.4). */
export const AMR_DESCRIPTION =
  'RFC 8176: `pwd` password, `otp` authenticator app or recovery code, `hwk`/`swk` security key or synced passkey, `user` verified by the authenticator, `mfa` two factors.';
export const Amr = Type.Array(Type.Enum(AUTH_METHODS), { uniqueItems: true, maxItems: AUTH_METHODS.length, description: AMR_DESCRIPTION, examples: [['pwd', 'otp', 'mfa']] });

/**
 * Formats the document uses that ajv-formats does not know, for every ajv the schemas meet (the
 * serializers' too, or each warns): checked by the services, accepted as they are by the schemas.
 */
export const SERVICE_CHECKED_FORMATS = { 'idn-email': true } as const;

export const UserSummary = Type.Object(
  {
    id: Uuid,
    username: Type.String({ pattern: USERNAME.source, maxLength: 39, examples: ['ada'] }),
    email: Type.String({ format: 'idn-email', maxLength: 254, description: 'Lower-cased, in Unicode NFC; may hold non-ASCII letters (RFC 6531).', examples: ['ada@example.com'] }),
  },
  { additionalProperties: false },
);

/** The router answers 404 for a longer path segment, before any handler runs. */
export const MAX_PARAM_LENGTH = 8192;

/**
 * An id in a path. Not checked here: a malformed id is answered like an unknown one (404), by the
 * service, so the only bound is the router's.
 */
export const IdParams = Type.Object(
  { id: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'A UUID. Anything else is 404.', examples: ['0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90'] }) },
  { additionalProperties: false },
);

/** A token's network allow-list, as requests give it and responses show it. */
export const AllowedCidrs = Type.Array(Type.String({ minLength: 1, maxLength: MAX_CIDR_LENGTH, examples: ['203.0.113.0/24'] }), {
  minItems: 1,
  maxItems: MAX_CIDRS,
  description: `IPv4 or IPv6 networks (address/prefix; a bare address is one host), at most ${MAX_CIDRS}. A request from any other address is 401 invalid_token.`,
  examples: [['203.0.113.0/24', '2001:db8::/48']],
});

/**
 * `limit` and `cursor`, as every list takes them. Read by parsePage (src/lib/pages.ts), which
 * answers 400 naming either when it is bad.
 */
export const PageParams = {
  limit: Type.Optional(Type.String({ maxLength: 8, description: `Items per page, 1 to ${MAX_PAGE}; ${DEFAULT_PAGE} by default.`, examples: ['50'] })),
  cursor: Type.Optional(
    Type.String({ maxLength: MAX_CURSOR_LENGTH, description: 'The `next_cursor` of the previous page: opaque, to be passed back as it came.', examples: ['MjAyNi0xMS0yMVQwOTozMDowMC4wMDBafDBiNmYzYzFl'] }),
  ),
};

/** The query string of a list that takes nothing but its page. */
export const PageQuery = Type.Object(PageParams, { additionalProperties: false });

type ListPage<K extends string, T extends TSchema> = TObject<Record<K, TArray<T>> & { next_cursor: TUnion<[TString, TNull]> }>;

/** A page of a list: its items under `key`, newest first, at most a page of them, and the next page's cursor. */
export function listPage<K extends string, T extends TSchema>(key: K, item: T, description: string): ListPage<K, T> {
  const properties = {
    [key]: Type.Array(item, { maxItems: MAX_PAGE, description: `${description} Newest first, at most \`limit\`.` }),
    next_cursor: Type.Union([Type.String({ maxLength: MAX_CURSOR_LENGTH }), Type.Null()], { description: 'Pass it as `cursor` for the next page; null on the last page.' }),
  };
  return Type.Object(properties as Record<K, TArray<T>> & { next_cursor: TUnion<[TString, TNull]> }, { additionalProperties: false });
}
