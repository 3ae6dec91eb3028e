import { AUDIT_TYPES, type AuditType } from '../audit/events.js';
import { toAuditJson } from '../audit/json.js';
import type { AuditQuery, AuditStore } from '../audit/store.js';
import { isUuid } from '../lib/ids.js';
import { parseOnce, UsageError } from './usage.js';

export const DEFAULT_CLI_LIMIT = 100;
const MAX_CLI_LIMIT = 100_000;

/** A date (UTC midnight) or a date and time with its zone: what ISO 8601 allows, and nothing Date.parse merely tolerates. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function time(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const [, year, month, day] = ISO_TIME.exec(value) ?? [];
  const ms = Date.parse(value);
  // Date.parse rolls 2026-02-30 over into March: the day must exist in its month.
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (year === undefined || Number.isNaN(ms) || date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) {
    throw new UsageError(`--${name} must be an ISO 8601 date, or a date and time with its zone: 2026-11-21 or 2026-11-21T09:30:00Z`);
  }
  return new Date(ms).toISOString();
}

/** The query of `audit list [--user ID] [--type T] [--since ISO] [--until ISO] [--limit N]`. */
export function auditQuery(args: string[]): AuditQuery {
  const { values } = parseOnce({
    args,
    options: { user: { type: 'string' }, type: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, limit: { type: 'string' } },
  });
  if (values.user !== undefined && !isUuid(values.user)) throw new UsageError('--user must be a user id (a UUID)');
  if (values.type !== undefined && !(AUDIT_TYPES as readonly string[]).includes(values.type)) {
    throw new UsageError(`--type must be one of ${AUDIT_TYPES.join(', ')}`);
  }
  const limit = values.limit === undefined ? DEFAULT_CLI_LIMIT : /^\d{1,6}$/.test(values.limit) ? Number(values.limit) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CLI_LIMIT) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_CLI_LIMIT}`);
  const since = time(values.since, 'since');
  const until = time(values.until, 'until');
  return {
    limit,
    ...(values.user === undefined ? {} : { userId: values.user }),
    ...(values.type === undefined ? {} : { type: values.type as AuditType }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
  };
}

/** Prints the matching events, newest first, one JSON object a line, with the user whose log each is in. */
export async function printAuditEvents(store: AuditStore, query: AuditQuery, write: (line: string) => void): Promise<void> {
  for (const event of await store.list(query)) write(JSON.stringify({ ...toAuditJson(event), user_id: event.userId }));
}
