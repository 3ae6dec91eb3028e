import { randomUUID } from 'node:crypto';
import { type AuditEvent, auditEvent, SYSTEM_CONTEXT } from '../audit/events.js';
import { type Clock, iso } from '../clock.js';
import type { BreakerChange } from './breaker.js';
import { PER_OWNER, RESERVED_FOR_OPERATOR } from './fairness.js';
import type { AttemptOutcome, ClaimedDelivery, WebhookQueue } from './queue.js';
import type { Send, SendResult } from './sender.js';
import { webhookHeaders } from './signature.js';
import type { DeliveryCount, DeliveryOutcome } from '../observability/metrics/queues.js';
import { ATTR, NO_TRACING, type TraceLink, type Tracing } from '../observability/tracing/tracing.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after each failed attempt, before jitter: the first retry comes within a minute (docs/webhooks.md). */
export const RETRY_DELAYS_MS = [5 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;
/** A delivery is retried for a day from its creation; an attempt that fails at or after it is the last. */
export const DELIVERY_WINDOW_MS = 24 * HOUR;
/** Each wait is moved by up to this fraction either way, so failed deliveries do not retry in lockstep. */
const JITTER = 0.2;
/**
 * Deliveries one process sends at once. Each endpoint has at most two in flight and each user at
 * most eight (fairness.ts), and four are kept for operator endpoints, so users' slow receivers
 * leave slots for everyone else.
 */
const CONCURRENCY = 32;

/**
 * When to try again after the `attempt`-th attempt (1 for the first) failed at `now`, or null when
 * that was the last: past the window, or the schedule is spent. Never later than the window's end.
 */
export function nextAttemptAt(createdAt: number, attempt: number, now: number, random: () => number = Math.random): number | null {
  const end = createdAt + DELIVERY_WINDOW_MS;
  const delay = RETRY_DELAYS_MS[attempt - 1];
  if (now >= end || delay === undefined) return null;
  return Math.min(now + delay * (1 - JITTER + 2 * JITTER * random()), end);
}

/**
 * The delivery's state after an attempt made at `attemptedAt` that ended at `endedAt`: 2xx
 * succeeded; anything else, a timeout or a refused address is a failed attempt.
 */
export function outcomeOf(delivery: ClaimedDelivery, result: SendResult, attemptedAt: number, endedAt: number, random?: () => number): AttemptOutcome {
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const next = ok ? null : nextAttemptAt(Date.parse(delivery.createdAt), delivery.attemptCount + 1, endedAt, random);
  return {
    attemptedAt: iso(attemptedAt),
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
    status: ok ? 'succeeded' : next === null ? 'failed' : 'pending',
    nextAttemptAt: next === null ? null : iso(next),
  };
}

/** A recorded attempt as `rz_webhook_deliveries_total` counts it: a failure is retried, a delivery given up is not. */
const COUNTED: Readonly<Record<AttemptOutcome['status'], DeliveryOutcome>> = { succeeded: 'success', pending: 'failure', failed: 'gave_up' };

export interface WorkerOptions {
  /** WEBHOOK_TIMEOUT_SECONDS in ms: a lease lasts twice this and a second, so only a dead worker's lapses. */
  readonly timeoutMs: number;
  readonly onError: (error: unknown, context: string) => void;
  readonly concurrency?: number;
  readonly random?: () => number;
  /** Counts each recorded attempt (`rz_webhook_deliveries_total`); absent when metrics are off. */
  readonly deliveries?: DeliveryCount | null;
  /** Each attempt is a CLIENT span, linked to the dispatch span that made its delivery when known. */
  readonly tracing?: Tracing;
  readonly linkOf?: (deliveryId: string) => TraceLink | null;
}

/**
 * Sends due deliveries. Each is claimed with a lease and a fresh lease token, so one instance at a
 * time sends it; the attempt is recorded only under that token, so a worker that stalled past its
 * lease cannot overwrite what the next one recorded. A process killed mid-send leaves a lease that
 * lapses, and the delivery is sent again (receivers drop repeats by `webhook-id`).
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<string, { readonly controller: AbortController; readonly done: Promise<void> }>();
  /** Of those in flight, the deliveries to user endpoints: they may not take the operator's reserved slots. */
  private usersInFlight = 0;
  private stopping = false;

  constructor(
    private readonly queue: WebhookQueue,
    private readonly send: Send,
    private readonly clock: Clock,
    private readonly options: WorkerOptions,
  ) {}

  /** Claims what free slots allow and starts sending it; does not wait for the sends. Returns how many it claimed. */
  async tick(): Promise<number> {
    const concurrency = this.options.concurrency ?? CONCURRENCY;
    const free = concurrency - this.inFlight.size;
    if (this.stopping || free <= 0) return 0;
    const now = this.clock.now();
    const leaseUntil = iso(now + 2 * this.options.timeoutMs + SECOND);
    const forUsers = Math.max(0, Math.min(free, concurrency - RESERVED_FOR_OPERATOR - this.usersInFlight));
    const claimed = await this.queue.claimDue(iso(now), leaseUntil, randomUUID(), free, { forUsers, perOwner: PER_OWNER });
    for (const delivery of claimed) {
      const controller = new AbortController();
      if (!delivery.operator) this.usersInFlight += 1;
      const done = this.attempt(delivery, controller.signal).finally(() => {
        this.inFlight.delete(delivery.id);
        if (!delivery.operator) this.usersInFlight -= 1;
      });
      this.inFlight.set(delivery.id, { controller, done });
    }
    return claimed.length;
  }

  /** Rounds that wait for their sends, until one finds nothing due (tests drive the worker with it). */
  async runOnce(): Promise<void> {
    for (;;) {
      const claimed = await this.tick();
      await Promise.all([...this.inFlight.values()].map((s) => s.done));
      if (claimed === 0) return;
    }
  }

  /** Stops claiming, aborts the sends in flight and gives their deliveries back, unattempted. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const send of this.inFlight.values()) send.controller.abort();
    await Promise.all([...this.inFlight.values()].map((s) => s.done));
  }

  private attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const { tracing = NO_TRACING, linkOf } = this.options;
    if (!tracing.enabled) return this.deliver(delivery, signal);
    const link = linkOf?.(delivery.id);
    const url = new URL(delivery.url);
    const attributes = {
      'http.request.method': 'POST',
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      [ATTR.webhookDeliveryId]: delivery.id,
      [ATTR.webhookAttempt]: delivery.attemptCount + 1,
    };
    return tracing.inSpan('rz.webhook.deliver', { kind: 'client', root: true, attributes, ...(link ? { links: [link] } : {}) }, (span) => this.deliver(delivery, signal, span.set));
  }

  private async deliver(delivery: ClaimedDelivery, signal: AbortSignal, traced?: (attributes: { 'http.response.status_code': number }) => void): Promise<void> {
    try {
      const at = this.clock.now();
      const headers = { ...webhookHeaders(delivery.secret, delivery.id, delivery.payload, at) };
      const result = await this.send(delivery.url, headers, delivery.payload, signal);
      if (result.statusCode !== null) traced?.({ 'http.response.status_code': result.statusCode });
      if (signal.aborted) await this.queue.release(delivery.id, delivery.leaseToken);
      else {
        const outcome = outcomeOf(delivery, result, at, this.clock.now(), this.options.random);
        if (await this.queue.recordAttempt(delivery.id, delivery.leaseToken, outcome, (change) => this.breakerEvent(change))) this.options.deliveries?.(COUNTED[outcome.status]);
      }
    } catch (error) {
      // The lease lapses and another round sends the delivery again.
      this.options.onError(error, 'webhook delivery');
    }
  }

  /** The audit event of an endpoint paused or resumed: its owner's (the operator's for an operator endpoint). */
  private breakerEvent(change: BreakerChange): AuditEvent {
    const details = { consecutive_failures: change.consecutiveFailures, paused_until: change.pausedUntil };
    return auditEvent({ type: `webhook.${change.change}`, userId: change.ownerUserId, subject: { type: 'webhook', id: change.endpointId }, details }, SYSTEM_CONTEXT, this.clock.now());
  }
}
