import type { ChangeSource } from './sources.js';
import type { Change } from './store.js';

/**
 * Why the change feed started every cache over, or why other processes may learn of a change late
 * (docs/revocation-metrics.md): a change this process committed but could not announce
 * (`lost_publish`), the announcing source (Redis) unreachable or its state lost or replaced
 * (`redis_reset`), the log itself not followed (pruned past the cursor, ids gone back, a read that
 * failed, or a database-only source unreachable: `resync`).
 */
export type GapReason = 'lost_publish' | 'redis_reset' | 'resync';

/** A source whose position was lost or replaced: Redis, or (without Redis) the database itself. */
export const SOURCE_LOST: Readonly<Record<ChangeSource['name'], GapReason>> = { redis: 'redis_reset', database: 'resync' };

/**
 * What the change feed tells the process's metrics: domains emit through this, and only
 * `src/observability/metrics/` knows how it is counted. Absent when metrics are off, so the feed does no work for it.
 */
export interface FeedObserver {
  /** Every listener (the caches, the event streams) has applied `change`. */
  applied(change: Change): void;
  gap(reason: GapReason): void;
}

/** What the event streams tell the process's metrics: `change` was written to the open streams. */
export interface DeliveryObserver {
  delivered(change: Change): void;
}

const REVOKING: ReadonlySet<string> = new Set(['token.revoked', 'session.revoked', 'user.deleted', 'app.deleted']);

/**
 * A change after which a credential that worked is refused: a revoked token or session, a deleted
 * user or app, a revoked service credential (which is recorded with no event).
 */
export const isRevocation = (change: Change): boolean => change.kind === 'service' || REVOKING.has(change.event?.type ?? '');
