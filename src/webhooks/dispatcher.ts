import { randomUUID } from 'node:crypto';
import { toAuditJson } from '../audit/json.js';
import type { StoredAuditEvent } from '../audit/store.js';
import { type Clock, iso } from '../clock.js';
import { BoundedMap } from '../lib/bounded-map.js';
import { ATTR, NO_TRACING, type TraceLink, type Tracing } from '../observability/tracing/tracing.js';
import type { DispatchEndpoint, WebhookQueue } from './queue.js';
import type { NewDelivery } from './store.js';

/** The type of a test delivery (POST /api/webhooks/{id}/test); no endpoint subscribes to it. */
export const TEST_EVENT_TYPE = 'webhook.test' as const;

/** Events claimed per statement; a round claims at most {@link MAX_BATCHES} of these. */
const BATCH = 100;
const MAX_BATCHES = 10;
/** Dispatch spans remembered for the deliveries they made, until sent (one process's worth). */
const MAX_LINKS = 10_000;

/** The body of an event's deliveries: the event exactly as GET /api/audit shows it, under `data`. */
export const eventPayload = (event: StoredAuditEvent): string =>
  JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: toAuditJson(event) });

/** The body of a test delivery. */
export const testPayload = (endpointId: string, now: number): string =>
  JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: iso(now), data: { webhook_id: endpointId } });

/**
 * Who receives an event: the endpoints of the user whose log it is in, and the operator's (every
 * event), that chose its type and existed when it occurred (an endpoint added later does not get
 * the events of before it).
 */
const receives = (endpoint: DispatchEndpoint, event: StoredAuditEvent): boolean =>
  (endpoint.ownerUserId === null || endpoint.ownerUserId === event.userId) && endpoint.eventTypes.includes(event.type) && endpoint.createdAt <= event.occurredAt;

/** The deliveries of a batch of events, created at `now` (the day of retries starts then). */
export function planDeliveries(events: readonly StoredAuditEvent[], endpoints: readonly DispatchEndpoint[], now: number): NewDelivery[] {
  const createdAt = iso(now);
  const out: NewDelivery[] = [];
  for (const event of events) {
    const matching = endpoints.filter((e) => receives(e, event));
    if (matching.length === 0) continue;
    const payload = eventPayload(event);
    for (const endpoint of matching) out.push({ id: randomUUID(), endpointId: endpoint.id, eventId: event.id, eventType: event.type, payload, createdAt });
  }
  return out;
}

/**
 * Turns audit events into deliveries, in the background of every server process (never on the
 * request path: recording an event costs nothing more than its insert). Events are claimed
 * atomically, so instances running at once each dispatch an event exactly once between them.
 * With tracing on, a round is a PRODUCER span, and the deliveries it made remember it: their
 * attempts, when this process sends them, link to it ({@link takeLink}; docs/operations.md).
 */
export class Dispatcher {
  private readonly links = new BoundedMap<string, TraceLink>(MAX_LINKS);

  constructor(
    private readonly queue: WebhookQueue,
    private readonly clock: Clock,
    private readonly tracing: Tracing = NO_TRACING,
  ) {}

  /** Dispatches what is waiting, up to a bound per round. Returns how many events it claimed. */
  async runOnce(): Promise<number> {
    if (!(await this.queue.hasUndispatched())) return 0;
    return this.tracing.inSpan('rz.webhook.dispatch', { kind: 'producer', root: true }, async (span) => {
      const link = this.tracing.activeLink();
      let total = 0;
      let deliveries = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const claimed = await this.queue.dispatch(BATCH, (events, endpoints) => {
          const planned = planDeliveries(events, endpoints, this.clock.now());
          deliveries += planned.length;
          if (link) for (const delivery of planned) this.links.set(delivery.id, link);
          return planned;
        });
        total += claimed;
        if (claimed < BATCH) break;
      }
      span.set({ [ATTR.webhookEvents]: total, [ATTR.webhookDeliveries]: deliveries });
      return total;
    });
  }

  /** The dispatch span that made a delivery, if this process made it and tracing recorded it. */
  takeLink(deliveryId: string): TraceLink | null {
    const link = this.links.get(deliveryId) ?? null;
    this.links.delete(deliveryId);
    return link;
  }
}
