import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AuditEvent, AuditType } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { insertBatches } from '../db/dialect.js';
import { sealIn, WEBHOOK_SECRET } from '../db/sealed-columns.js';
import { fewerThan, lockOwner, newestFirst } from '../db/pages.js';
import type { PageRequest, Position } from '../lib/pages.js';
import type { Tables, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/tables.js';
import { NO_SEALING_KEYS, Sealer } from '../lib/sealed.js';

/** An endpoint as its owner sees it: never its secret. */
export interface WebhookEndpoint {
  readonly id: string;
  /** Null for an operator endpoint, which receives everyone's events. */
  readonly ownerUserId: string | null;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly AuditType[];
  readonly createdAt: string;
  /** Set while its breaker is open (breaker.ts): nothing is sent before `until`, then one probe. */
  readonly paused?: EndpointPause;
}

/** An open breaker: the failed attempts in a row, and when the next probe may go. */
export interface EndpointPause {
  readonly consecutiveFailures: number;
  readonly until: string;
}

export interface NewEndpoint extends WebhookEndpoint {
  readonly secret: string;
}

export type DeliveryStatus = WebhookDeliveriesTable['status'];

/** What a delivery carries: an audit event's type, or `webhook.test`. */
export type DeliveryEventType = AuditType | 'webhook.test';

/** One attempt at a delivery, as recorded. */
export interface Attempt {
  readonly attemptedAt: string;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** A delivery with its attempts, oldest attempt first. */
export interface Delivery {
  readonly id: string;
  readonly endpointId: string;
  readonly eventId: string | null;
  readonly eventType: DeliveryEventType;
  readonly status: DeliveryStatus;
  readonly createdAt: string;
  readonly nextAttemptAt: string | null;
  readonly finishedAt: string | null;
  readonly attempts: readonly Attempt[];
}

/** A delivery to make, due at once. */
export interface NewDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly eventId: string | null;
  readonly eventType: DeliveryEventType;
  readonly payload: string;
  readonly createdAt: string;
}

export type Db = Kysely<Tables> | Transaction<Tables>;

/** Owner `undefined` is the operator acting (CLI): every endpoint. */
export type OwnerFilter = string | undefined;

/** What an endpoint's reads select: never its secret, which only the delivery worker reads (queue.ts). */
export const ENDPOINT_COLUMNS = ['id', 'owner_user_id', 'url', 'description', 'event_types', 'created_at', 'consecutive_failures', 'paused_until'] as const;

/** An endpoint from its row. */
export const toEndpoint = (row: Pick<Selectable<WebhookEndpointsTable>, (typeof ENDPOINT_COLUMNS)[number]>): WebhookEndpoint => ({
  id: row.id,
  ownerUserId: row.owner_user_id,
  url: row.url,
  description: row.description,
  eventTypes: JSON.parse(row.event_types) as AuditType[],
  createdAt: row.created_at,
  ...(row.paused_until === null ? {} : { paused: { consecutiveFailures: Number(row.consecutive_failures), until: row.paused_until } }),
});

/** Inserts deliveries inside the caller's transaction, in {@link insertBatches} parts. */
export async function insertDeliveries(db: Db, deliveries: readonly NewDelivery[]): Promise<void> {
  const rows = deliveries.map((d) => ({
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    payload: d.payload,
    status: 'pending' as const,
    next_attempt_at: d.createdAt,
    created_at: d.createdAt,
  }));
  for (const part of insertBatches(rows)) await db.insertInto('webhook_deliveries').values(part).execute();
}

/** SQL for webhook endpoints and for reading their deliveries. The delivery queue is in queue.ts. */
export class WebhookStore {
  constructor(
    private readonly db: Kysely<Tables>,
    /** Seals the secret at rest under KEY_ENCRYPTION_KEY, when set. */
    private readonly sealer = new Sealer(NO_SEALING_KEYS),
  ) {}

  /**
   * Inserts an endpoint with its audit event, unless its owner already has `max` endpoints: false
   * then. The owner's row is written first (a no-op update) so that two creations for one user
   * cannot both count nine and make eleven: it takes PostgreSQL's row lock and SQLite's write lock
   * before the count. Operator endpoints (no owner) have no cap.
   */
  async insertEndpoint(endpoint: NewEndpoint, event: AuditEvent, max: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const owner = endpoint.ownerUserId;
      if (owner !== null) {
        if (!(await lockOwner(trx, 'users', owner))) return false;
        if (!(await fewerThan(trx.selectFrom('webhook_endpoints').select('id').where('owner_user_id', '=', owner), max))) return false;
      }
      await trx
        .insertInto('webhook_endpoints')
        .values({
          id: endpoint.id,
          owner_user_id: owner,
          url: endpoint.url,
          description: endpoint.description,
          event_types: JSON.stringify(endpoint.eventTypes),
          secret: sealIn(this.sealer, WEBHOOK_SECRET, endpoint.id, endpoint.secret),
          created_at: endpoint.createdAt,
        })
        .execute();
      await recordAudit(trx, event);
      return true;
    });
  }

  /** Endpoints newest first: one user's, or every one (the operator's view). */
  async listEndpoints(owner: OwnerFilter, page?: PageRequest): Promise<WebhookEndpoint[]> {
    const query = this.db
      .selectFrom('webhook_endpoints')
      .select(ENDPOINT_COLUMNS)
      .$if(owner !== undefined, (q) => q.where('owner_user_id', '=', owner ?? ''));
    const rows = await newestFirst(query, 'webhook_endpoints', page).execute();
    return rows.map(toEndpoint);
  }

  /** One endpoint of `owner` (any, for the operator), or undefined. */
  async findEndpoint(id: string, owner: OwnerFilter): Promise<WebhookEndpoint | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select(ENDPOINT_COLUMNS)
      .where('id', '=', id)
      .$if(owner !== undefined, (q) => q.where('owner_user_id', '=', owner ?? ''))
      .executeTakeFirst();
    return row ? toEndpoint(row) : undefined;
  }

  /**
   * Deletes an endpoint of `owner` (any, for the operator) with its deliveries, recording `audit`
   * of it in the same transaction. The endpoint deleted, or undefined when there was none.
   */
  async deleteEndpoint(id: string, owner: OwnerFilter, audit: (endpoint: WebhookEndpoint) => AuditEvent): Promise<WebhookEndpoint | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('webhook_endpoints')
        .where('id', '=', id)
        .$if(owner !== undefined, (q) => q.where('owner_user_id', '=', owner ?? ''))
        .returning(ENDPOINT_COLUMNS)
        .executeTakeFirst();
      if (!row) return undefined;
      const endpoint = toEndpoint(row);
      await recordAudit(trx, audit(endpoint));
      return endpoint;
    });
  }

  /**
   * Queues one delivery unless `max` of its type to the endpoint are pending already. The endpoint's
   * row is locked first (a write that changes nothing), so requests at once cannot all pass the
   * count; `gone` when the endpoint was deleted in the meantime.
   */
  async insertCapped(delivery: NewDelivery, max: number): Promise<'queued' | 'full' | 'gone'> {
    return this.db.transaction().execute(async (trx) => {
      const locked = await trx.updateTable('webhook_endpoints').set((eb) => ({ created_at: eb.ref('created_at') })).where('id', '=', delivery.endpointId).executeTakeFirst();
      if (locked.numUpdatedRows === 0n) return 'gone';
      const { n } = await trx
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('endpoint_id', '=', delivery.endpointId)
        .where('event_type', '=', delivery.eventType)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      if (Number(n) >= max) return 'full';
      await insertDeliveries(trx, [delivery]);
      return 'queued';
    });
  }

  /** Deliveries of an endpoint, newest first, after `after`, each with its attempts. */
  async listDeliveries(endpointId: string, limit: number, after?: Position): Promise<Delivery[]> {
    const query = this.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'event_id', 'event_type', 'status', 'created_at', 'next_attempt_at', 'finished_at'])
      .where('endpoint_id', '=', endpointId);
    // At most `limit` rows: a page of one row fewer, and the row that tells whether another follows.
    const rows = await newestFirst(query, 'webhook_deliveries', { limit: limit - 1, after }).execute();
    if (rows.length === 0) return [];
    const attempts = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('attempt')
      .execute();
    const byDelivery = new Map<string, Attempt[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ attemptedAt: a.attempted_at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      eventType: r.event_type as DeliveryEventType,
      status: r.status,
      createdAt: r.created_at,
      nextAttemptAt: r.next_attempt_at,
      finishedAt: r.finished_at,
      attempts: byDelivery.get(r.id) ?? [],
    }));
  }

  /** Deletes deliveries (with their attempts) that finished before `before`. Returns how many. */
  async pruneFinished(before: string): Promise<number> {
    const result = await this.db.deleteFrom('webhook_deliveries').where('finished_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
