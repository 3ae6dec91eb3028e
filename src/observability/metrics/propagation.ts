import { Counter, Histogram } from 'prom-client';
import { type DeliveryObserver, type FeedObserver, type GapReason, isRevocation } from '../../changes/observer.js';
import type { Change } from '../../changes/store.js';
import type { Metrics } from './registry.js';

/**
 * 1 ms to 5 s, with the 100 ms bar (docs/revocation-metrics.md) a bucket boundary, so its
 * percentile is read off the buckets without interpolation.
 */
export const PROPAGATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const GAP_REASONS: readonly GapReason[] = ['lost_publish', 'redis_reset', 'resync'];

/** Seconds since a change's commit, never below zero (clocks of two hosts may disagree by a little). */
const sinceCommit = (change: Change, now: number): number | null =>
  change.committedAt === undefined ? null : Math.max(0, now - change.committedAt) / 1000;

/**
 * How fast changes reach this instance and its event streams (docs/revocation-metrics.md), from
 * the commit time every change-log entry carries:
 *
 * - `rz_revocation_propagation_seconds`: one sample per revocation per instance (the one that made
 *   it too), when every cache of the instance has applied it, from then on refusing the credential;
 * - `rz_event_delivery_lag_seconds`: one sample per change written to the event streams (not one
 *   per stream: every open stream gets it in the same turn), when it has been written to them;
 * - `rz_change_feed_gaps_total{reason}`: each time the feed started every cache over, or could not
 *   announce a change it committed.
 *
 * Entries recorded by an older version carry no commit time: they give no sample.
 */
export class PropagationMetrics implements FeedObserver, DeliveryObserver {
  private readonly propagation: Histogram;
  private readonly deliveryLag: Histogram;
  private readonly gaps: Counter<'reason'>;

  constructor(registry: Metrics) {
    const registers = [registry];
    const buckets = [...PROPAGATION_BUCKETS];
    this.propagation = new Histogram({
      name: 'rz_revocation_propagation_seconds',
      help: "From a revocation's commit to the moment this instance refuses the credential.",
      buckets,
      registers,
    });
    this.deliveryLag = new Histogram({
      name: 'rz_event_delivery_lag_seconds',
      help: "From a change's commit to its write to this instance's event streams (one sample per change).",
      buckets,
      registers,
    });
    this.gaps = new Counter({
      name: 'rz_change_feed_gaps_total',
      help: 'Times the change feed started every cache over, or could not announce a change it committed.',
      labelNames: ['reason'],
      registers,
    });
    // Every reason is a series from the start: an alert on an increase needs the zero before it.
    for (const reason of GAP_REASONS) this.gaps.inc({ reason }, 0);
  }

  applied(change: Change): void {
    if (!isRevocation(change)) return;
    const seconds = sinceCommit(change, Date.now());
    if (seconds !== null) this.propagation.observe(seconds);
  }

  delivered(change: Change): void {
    const seconds = sinceCommit(change, Date.now());
    if (seconds !== null) this.deliveryLag.observe(seconds);
  }

  gap(reason: GapReason): void {
    this.gaps.inc({ reason });
  }
}
