import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Tables } from '../db/tables.js';
import { Periodic } from '../lib/periodic.js';
import type { Sealer } from '../lib/sealed.js';
import { Dispatcher } from './dispatcher.js';
import { WebhookQueue } from './queue.js';
import { createSender } from './sender.js';
import { WebhookService } from './service.js';
import { WebhookStore } from './store.js';
import { DeliveryWorker } from './worker.js';
import type { DeliveryCount } from '../observability/metrics/queues.js';
import type { Tracing } from '../observability/tracing/tracing.js';

/** How often each server process dispatches new events and looks for due deliveries. */
export const DELIVERY_INTERVAL_MS = 1000;

/**
 * The server's webhook background work: dispatching audit events into deliveries and sending the
 * due ones. The server starts it after it listens and stops it on shutdown; the CLI never starts
 * it, and nothing of it runs on a request's path.
 */
export class WebhookDelivery {
  private readonly periodic: Periodic;

  constructor(
    readonly dispatcher: Dispatcher,
    readonly worker: DeliveryWorker,
    onError: (error: unknown, context: string) => void,
    intervalMs = DELIVERY_INTERVAL_MS,
  ) {
    this.periodic = new Periodic(intervalMs, () => this.tick(), (error) => onError(error, 'webhooks'));
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the schedule; sends in flight are aborted and their deliveries given back for later. */
  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.worker.stop();
  }

  /** Dispatches what is waiting and sends what is due, waiting for the sends (tests). */
  async runOnce(): Promise<void> {
    await this.dispatcher.runOnce();
    await this.worker.runOnce();
  }

  private async tick(): Promise<void> {
    await this.dispatcher.runOnce();
    await this.worker.tick();
  }
}

/** The webhook rules the API and the CLI call, and the background work the server runs. */
export function createWebhooks(
  db: Kysely<Tables>,
  clock: Clock,
  config: Config['webhooks'] & { readonly maxEndpointsPerUser: number },
  onError: (error: unknown, context: string) => void,
  sealer: Sealer,
  observed: { readonly deliveries?: DeliveryCount | null; readonly tracing?: Tracing } = {},
) {
  const { deliveries = null, tracing } = observed;
  const queue = new WebhookQueue(db, sealer);
  const { allowPrivate, timeoutMs, connectTimeoutMs, maxEndpointsPerUser } = config;
  const dispatcher = new Dispatcher(queue, clock, tracing);
  const linkOf = (id: string) => dispatcher.takeLink(id);
  const worker = new DeliveryWorker(queue, createSender({ allowPrivate, timeoutMs, connectTimeoutMs }), clock, { timeoutMs, onError, deliveries, tracing, linkOf });
  const store = new WebhookStore(db, sealer);
  return {
    store,
    service: new WebhookService(store, clock, { allowPrivate, maxEndpointsPerUser }),
    delivery: new WebhookDelivery(dispatcher, worker, onError),
  };
}
