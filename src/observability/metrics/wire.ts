import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Registry } from 'prom-client';
import type { PasswordHasher } from '../../account/password-hasher.js';
import type { ChangeFeed } from '../../changes/feed.js';
import type { Database } from '../../db/database.js';
import type { EventHub } from '../../events/hub.js';
import { probe } from '../../health/service.js';
import type { KeyRing } from '../../keys/service.js';
import { pendingDeliveries } from '../../webhooks/depth-store.js';
import { hashQueueDepth, mailQueueDepth, webhookQueueDepth } from './queues.js';
import { PropagationMetrics } from './propagation.js';
import type { Metrics } from './registry.js';
import { seriesOf } from './series.js';
import { observeState } from './state.js';

export { createMetrics, type Metrics } from './registry.js';
export { seriesOf };

/** What the services count into, and the change feed's propagation histograms; nothing when metrics are off. */
export function instruments(metrics: Metrics | null): { counts: ReturnType<typeof seriesOf> | null; propagation: PropagationMetrics | undefined } {
  return metrics ? { counts: seriesOf(metrics), propagation: new PropagationMetrics(metrics) } : { counts: null, propagation: undefined };
}

/** The webhook and mail queues are counted up to this many entries: beyond it the gauge says "at least". */
export const QUEUE_DEPTH_CAP = 10_000;

/** What the scrape-time gauges and the event count read, built by the composition root. */
export interface Observed {
  readonly database: Database;
  readonly redis: Redis | null;
  readonly hasher: PasswordHasher;
  readonly keys: KeyRing;
  readonly feed: ChangeFeed;
  readonly events: EventHub;
  /** Mails waiting, counted up to a bound; null when mail is off (the gauge is then absent). */
  readonly mailPending: ((cap: number) => Promise<number>) | null;
}

/**
 * Registers what is read when scraped (queue depths, signing keys, store and Redis up, open
 * streams) and counts the events this instance writes to its streams.
 */
export function observeServices(registry: Registry, { database, redis, hasher, keys, feed, events, mailPending }: Observed): void {
  hashQueueDepth(registry, () => hasher.queueDepth);
  webhookQueueDepth(registry, () => pendingDeliveries(database.db, QUEUE_DEPTH_CAP));
  if (mailPending) mailQueueDepth(registry, () => mailPending(QUEUE_DEPTH_CAP));
  observeState(registry, {
    signingKeys: () => keys.counts(),
    storeUp: async () => (await probe(() => sql`select 1`.execute(database.db))).ok,
    redisUp: redis ? async () => (await probe(() => redis.ping())).ok : null,
    eventStreams: () => events.size,
  });
  const published = seriesOf(registry).events;
  // The hub writes every change with an event to every open stream; a reset or a service
  // credential's change is no event, and with no stream open nothing is written.
  feed.subscribe((change) => {
    if (change.kind !== 'reset' && change.kind !== 'service' && change.event && events.size > 0) published(change.event.type);
  });
}
