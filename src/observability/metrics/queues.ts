import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** argon2id at the configured cost takes tens to hundreds of milliseconds; queued checks wait longer. */
const HASH_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export type HashOp = 'hash' | 'verify';
/** Reports how long one password hash or check took on the pool (the wait for a slot excluded). */
export type HashTiming = (op: HashOp, seconds: number) => void;

/** `rz_password_hash_duration_seconds{op}`. The queue's depth is read at scrape time ({@link hashQueueDepth}). */
export function hashTiming(registry: Registry): HashTiming {
  const histogram = new Histogram({ name: 'rz_password_hash_duration_seconds', help: 'Time of one argon2id hash or check, by operation.', labelNames: ['op'], buckets: HASH_BUCKETS, registers: [registry] });
  const children = { hash: histogram.labels('hash'), verify: histogram.labels('verify') };
  return (op, seconds) => children[op].observe(seconds);
}

/** `rz_password_hash_queue_depth`: checks waiting for a slot, read from the hasher when scraped. */
export function hashQueueDepth(registry: Registry, depth: () => number): void {
  new Gauge({
    name: 'rz_password_hash_queue_depth',
    help: 'Password hashes and checks waiting for a free slot.',
    registers: [registry],
    collect() {
      this.set(depth());
    },
  });
}

export type DeliveryOutcome = 'success' | 'failure' | 'gave_up';
/** Reports one delivery attempt's outcome (a webhook, a mail): `failure` will be retried, `gave_up` will not. */
export type DeliveryCount = (outcome: DeliveryOutcome) => void;

function outcomeCounter(registry: Registry, name: string, help: string): DeliveryCount {
  const counter = new Counter({ name, help, labelNames: ['outcome'], registers: [registry] });
  return (outcome) => counter.labels(outcome).inc();
}

/** `rz_webhook_deliveries_total{outcome}`. */
export const deliveryCount = (registry: Registry) => outcomeCounter(registry, 'rz_webhook_deliveries_total', 'Webhook delivery attempts, by outcome.');

/** `rz_mail_deliveries_total{outcome}`. */
export const mailDeliveryCount = (registry: Registry) => outcomeCounter(registry, 'rz_mail_deliveries_total', 'Mail delivery attempts to the SMTP relay, by outcome.');

/** A queue's depth, counted when scraped up to a bound (one bounded index read); absent from a scrape whose count failed. */
function depthGauge(registry: Registry, name: string, help: string, pending: () => Promise<number>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.reset();
      const depth = await pending().catch(() => null);
      if (depth !== null) this.set(depth);
    },
  });
}

/** `rz_webhook_queue_depth`: deliveries waiting to be sent. */
export const webhookQueueDepth = (registry: Registry, pending: () => Promise<number>) =>
  depthGauge(registry, 'rz_webhook_queue_depth', 'Webhook deliveries waiting to be sent (counted up to a bound, see docs/operations.md).', pending);

/** `rz_mail_queue_depth`: mails waiting to be sent; registered only with mail on. */
export const mailQueueDepth = (registry: Registry, pending: () => Promise<number>) =>
  depthGauge(registry, 'rz_mail_queue_depth', 'Mails waiting to be sent (counted up to a bound, see docs/operations.md).', pending);
