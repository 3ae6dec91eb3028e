import type { Redis } from 'ioredis';
import type { Clock } from './clock.js';
import type { Database } from './db/database.js';
import type { Tracing } from './observability/tracing/tracing.js';
import type { DeliveryCount } from './observability/metrics/queues.js';

/** How {@link createServices} builds a process's services (src/composition-root.ts). */
export interface ServiceOptions {
  readonly clock?: Clock;
  /** Where background failures (e.g. a failed usage flush) are reported. */
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Refuse to start when the change feed's source (Redis) cannot be reached. The CLI sets it: a
   * change it committed could not be announced to the running instances.
   */
  readonly requireFeed?: boolean;
  readonly tracing?: Tracing; // started before the services (src/observability/tracing/load.ts); off when absent
  /** Counts mail outcomes when metrics are off here: `rz-auth mail deliver` forwards them to the server that forked it. */
  readonly mailCount?: DeliveryCount;
}

/** What the composition root has opened before it wires the services. */
export interface Infrastructure extends Required<Pick<ServiceOptions, 'requireFeed' | 'tracing'>> {
  readonly mailCount: DeliveryCount | null;
  readonly database: Database;
  readonly redis: Redis | null;
  readonly clock: Clock;
  readonly onError: NonNullable<ServiceOptions['onError']>;
}
