import type { StoredAuditEvent } from './store.js';

/** An event as the API and the CLI show it (docs/audit-log.md). */
export const toAuditJson = (e: StoredAuditEvent) => ({
  id: e.id,
  type: e.type,
  occurred_at: e.occurredAt,
  actor: e.actor,
  subject: e.subject,
  ip: e.address,
  user_agent: e.userAgent,
  request_id: e.requestId,
  details: e.details,
});
