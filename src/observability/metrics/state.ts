import { Counter, Gauge, type Registry } from 'prom-client';

/** What the scrape-time gauges read: each is in memory or one trivial query, none blocks a scrape long. */
export interface ObservedState {
  /** Signing keys that still verify: the active (signing) ones and the retired ones. */
  readonly signingKeys: () => { readonly active: number; readonly retired: number };
  /** Whether the database answers a trivial query in time. */
  readonly storeUp: () => Promise<boolean>;
  /** Whether Redis answers in time; null when REDIS_URL is not set (the gauge is then absent). */
  readonly redisUp: (() => Promise<boolean>) | null;
  /** Event streams open on this instance. */
  readonly eventStreams: () => number;
}

const gaugeOf = (registry: Registry, name: string, help: string, read: () => Promise<number> | number) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });

/** `rz_signing_keys{state}`, `rz_store_up`, `rz_redis_up` and `rz_event_streams_open`, computed when scraped. */
export function observeState(registry: Registry, state: ObservedState): void {
  new Gauge({
    name: 'rz_signing_keys',
    help: 'JWT signing keys that still verify, by state.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { active, retired } = state.signingKeys();
      this.labels('active').set(active);
      this.labels('retired').set(retired);
    },
  });
  gaugeOf(registry, 'rz_store_up', 'Whether the database answered a trivial query (1) or not (0).', async () => Number(await state.storeUp()));
  const { redisUp } = state;
  if (redisUp) gaugeOf(registry, 'rz_redis_up', 'Whether Redis answered a ping (1) or not (0).', async () => Number(await redisUp()));
  gaugeOf(registry, 'rz_event_streams_open', 'Event streams (GET /api/events) open on this instance.', state.eventStreams);
}

/** Reports one event written to this instance's open streams, by its type (docs/platform-services.md). */
export type EventCount = (type: string) => void;

/** `rz_events_published_total{type}`: the types are the fixed ones of the event stream. */
export function eventCount(registry: Registry): EventCount {
  const counter = new Counter({ name: 'rz_events_published_total', help: 'Events written to the open event streams of this instance, by type.', labelNames: ['type'], registers: [registry] });
  return (type) => counter.labels(type).inc();
}
