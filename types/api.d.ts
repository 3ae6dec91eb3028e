// Names for the generated wire types (types/openapi.d.ts, written by scripts/openapi-types.ts):
// what each operation takes and answers, by its operationId.
import type { components, operations } from './openapi.js';

export type { components, operations, paths } from './openapi.js';

/** The operationIds of the document: `createApiToken`, `listAuditEvents`. */
export type OperationId = keyof operations;

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON an operation answers with `status` (200 unless named). */
export type Answer<Op extends OperationId, Status extends number = 200> = Status extends keyof operations[Op]['responses'] ? JsonOf<operations[Op]['responses'][Status]> : never;

/** The JSON body an operation takes. */
export type RequestBody<Op extends OperationId> = JsonOf<NonNullable<operations[Op]['requestBody']>>;

/** An RFC 9457 problem, the body of every error answer (`application/problem+json`). */
export type Problem = components['schemas']['Problem'];

/** One event of the audit log, as GET /api/audit answers it. */
export type AuditEvent = Answer<'listAuditEvents'>['events'][number];

/** Every type of the audit log: a union, so a table keyed by it is complete or fails to compile. */
export type AuditType = AuditEvent['type'];
