import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { insertBatches } from '../db/dialect.js';
import type { AuditEventsTable, Tables } from '../db/tables.js';
import type { Actor, AuditEvent, AuditType, Details, Subject } from './events.js';

/** An event as read back, with its place in the log (the cursor of the next page). */
export interface StoredAuditEvent extends AuditEvent {
  readonly seq: number;
}

/** Which events to read, newest first. */
export interface AuditQuery {
  /** One user's log; undefined for everyone's (the operator's CLI). */
  readonly userId?: string;
  readonly type?: AuditType;
  /** Only events older than this position in the log (the cursor). */
  readonly beforeSeq?: number;
  /** ISO 8601: events at or after `since`, and before `until`. */
  readonly since?: string;
  readonly until?: string;
  readonly limit: number;
}

type Executor = Kysely<Tables> | Transaction<Tables>;

/**
 * An event enters the webhook outbox (`dispatched` 0) only when an endpoint that could receive it
 * exists as it is written: one of its user's, or one of the operator's. Decided in the INSERT
 * itself, so the check and the write see the same endpoints; an endpoint added later never gets
 * earlier events anyway, so the rest are born dispatched, and a service without webhooks pays
 * neither the outbox's index entry nor the dispatcher's claim.
 */
const awaitsDispatch = (userId: string | null) =>
  sql<number>`case when exists (select 1 from webhook_endpoints where owner_user_id is null or owner_user_id = ${userId}) then 0 else 1 end`;

const toRow = (event: AuditEvent) => ({
  id: event.id,
  type: event.type,
  occurred_at: event.occurredAt,
  user_id: event.userId,
  actor_type: event.actor.type,
  actor_id: event.actor.id,
  subject_type: event.subject?.type ?? null,
  subject_id: event.subject?.id ?? null,
  client_address: event.address,
  user_agent: event.userAgent,
  request_id: event.requestId,
  details: JSON.stringify(event.details),
  dispatched: awaitsDispatch(event.userId),
});

/**
 * Appends events, in one statement per {@link insertBatches} part. Called with the transaction of the
 * change they record, so the two commit or roll back together; events that record no change (a
 * failed login) are written on their own.
 */
export async function recordAudit(db: Executor, events: AuditEvent | readonly AuditEvent[]): Promise<void> {
  const rows = Array.isArray(events) ? events.map(toRow) : [toRow(events as AuditEvent)];
  for (const part of insertBatches(rows)) await db.insertInto('audit_events').values(part).execute();
}

/** An event as read back from its row. */
export function toStoredEvent(row: Selectable<AuditEventsTable>): StoredAuditEvent {
  return {
    // PostgreSQL returns bigint as a string.
    seq: Number(row.seq),
    id: row.id,
    type: row.type as AuditType,
    occurredAt: row.occurred_at,
    userId: row.user_id,
    actor: { type: row.actor_type as Actor['type'], id: row.actor_id },
    subject: row.subject_type === null || row.subject_id === null ? null : { type: row.subject_type as Subject['type'], id: row.subject_id },
    address: row.client_address,
    userAgent: row.user_agent,
    requestId: row.request_id,
    details: JSON.parse(row.details) as Details,
  };
}

/** Reads and prunes the audit log. */
export class AuditStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Writes events that record no change of their own. */
  record(events: AuditEvent | readonly AuditEvent[]): Promise<void> {
    return recordAudit(this.db, events);
  }

  /** Events matching `query`, newest first. */
  async list(query: AuditQuery): Promise<StoredAuditEvent[]> {
    let select = this.db.selectFrom('audit_events').selectAll();
    if (query.userId !== undefined) select = select.where('user_id', '=', query.userId);
    if (query.type !== undefined) select = select.where('type', '=', query.type);
    if (query.beforeSeq !== undefined) select = select.where('seq', '<', query.beforeSeq);
    if (query.since !== undefined) select = select.where('occurred_at', '>=', query.since);
    if (query.until !== undefined) select = select.where('occurred_at', '<', query.until);
    const rows = await select.orderBy('seq', 'desc').limit(query.limit).execute();
    return rows.map(toStoredEvent);
  }

  /** Deletes the events that occurred before `before`. Returns how many. */
  async prune(before: string): Promise<number> {
    const result = await this.db.deleteFrom('audit_events').where('occurred_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
