import type { AuditStore } from '../audit/store.js';
import type { ChangeStore } from '../changes/store.js';
import { DAY_MS, iso } from '../clock.js';
import type { SessionStore } from '../account/session-store.js';
import type { WebhookStore } from '../webhooks/store.js';
import type { MailQueue } from '../mail/queue.js';
import type { Sweep } from './runner.js';

/** How often the server sweeps. Rows wait at most this long past their time; nothing depends on it. */
export const MAINTENANCE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Expired sessions are kept this long before they are deleted: an instance whose clock is behind
 * the sweeper's must not find a session missing that it still considers valid.
 */
export const SESSION_GRACE_MS = 60 * 60 * 1000;

export const expiredSessions = (sessions: SessionStore, graceMs = SESSION_GRACE_MS): Sweep => ({
  name: 'expired sessions',
  run: (now) => sessions.deleteExpired(iso(now - graceMs)),
});

/**
 * Change-log entries older than the retention window. Every running instance reads the log at
 * least once per poll interval (seconds), so only an instance away for longer than the window can
 * miss an entry, and it notices the gap (the oldest id left is past its cursor) and starts its
 * caches over.
 */
export const oldChanges = (changes: ChangeStore, retentionMs: number): Sweep => ({
  name: 'change log',
  run: (now) => changes.prune(iso(now - retentionMs)),
});

/** Audit events older than AUDIT_RETENTION_DAYS. */
export const oldAuditEvents = (audit: AuditStore, retentionMs: number): Sweep => ({
  name: 'audit log',
  run: (now) => audit.prune(iso(now - retentionMs)),
});

/** How long a finished webhook delivery (and its attempts) stays visible to its owner. */
export const DELIVERY_RETENTION_MS = 30 * DAY_MS;

/** Webhook deliveries that finished (succeeded, or failed for good) more than 30 days ago. */
export const oldDeliveries = (webhooks: WebhookStore, retentionMs = DELIVERY_RETENTION_MS): Sweep => ({
  name: 'webhook deliveries',
  run: (now) => webhooks.pruneFinished(iso(now - retentionMs)),
});

/** Mails sent, given up or superseded more than `retentionMs` ago (30 days, as webhook deliveries); only with mail on. */
export const oldMails = (outbox: MailQueue, retentionMs = DELIVERY_RETENTION_MS): Sweep => ({
  name: 'mail outbox',
  run: (now) => outbox.pruneFinished(iso(now - retentionMs)),
});
