import type { Kysely } from 'kysely';
import { type StoredAuditEvent, toStoredEvent } from '../audit/store.js';
import { isPostgres } from '../db/dialect.js';
import type { Tables } from '../db/tables.js';
import { type DeliveryStatus, ENDPOINT_COLUMNS, insertDeliveries, type NewDelivery, toEndpoint, type WebhookEndpoint } from './store.js';

/** An endpoint as the dispatcher matches it: its owner, types and creation time. */
export type DispatchEndpoint = Pick<WebhookEndpoint, 'id' | 'ownerUserId' | 'eventTypes' | 'createdAt'>;

/** A delivery a worker has claimed: what it needs to send it, and the lease it holds. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly payload: string;
  readonly createdAt: string;
  /** Attempts recorded before this one. */
  readonly attemptCount: number;
  readonly leaseToken: string;
}

/** What one attempt did, and what becomes of the delivery. */
export interface AttemptOutcome {
  readonly attemptedAt: string;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly status: DeliveryStatus;
  /** When the next attempt is due (pending), null once finished. */
  readonly nextAttemptAt: string | null;
}

/**
 * The outbox's SQL. Every claim is one atomic statement, so several instances (and cluster workers
 * on one SQLite file) never take the same event or the same due delivery: on SQLite the UPDATE holds
 * the database's write lock, on PostgreSQL the inner SELECT locks its rows and skips rows another
 * claim holds (FOR UPDATE SKIP LOCKED). That SELECT is a MATERIALIZED CTE, run once: as a subquery
 * of the UPDATE, PostgreSQL may rescan it per row, and each rescan skips the rows the last one
 * locked and returns new ones, so one claim took every due row whatever its limit.
 */
export class WebhookQueue {
  private readonly pg: boolean;

  constructor(private readonly db: Kysely<Tables>) {
    this.pg = isPostgres(db);
  }

  /** True when some audit event awaits the dispatcher: one probe of a partial index, and no write. */
  async hasUndispatched(): Promise<boolean> {
    const row = await this.db.selectFrom('audit_events').select('seq').where('dispatched', '=', 0).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Claims up to `limit` undispatched events, oldest first, and inserts the deliveries `plan` makes
   * of them in the same transaction: an event is marked dispatched exactly when its deliveries
   * exist. Returns how many events it claimed.
   */
  async dispatch(limit: number, plan: (events: StoredAuditEvent[], endpoints: DispatchEndpoint[]) => NewDelivery[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      // The claim is the transaction's first statement: on SQLite it takes the write lock at once.
      const rows = await trx
        .with(
          (w) => w('claim').materialized(),
          (db) =>
            db
              .selectFrom('audit_events')
              .select('seq')
              .where('dispatched', '=', 0)
              .orderBy('seq')
              .limit(limit)
              .$if(this.pg, (q) => q.forUpdate().skipLocked()),
        )
        .updateTable('audit_events')
        .set({ dispatched: 1 })
        .where('dispatched', '=', 0)
        .where('seq', 'in', (eb) => eb.selectFrom('claim').select('seq'))
        .returningAll()
        .execute();
      if (rows.length === 0) return 0;
      const events = rows.map(toStoredEvent).sort((a, b) => a.seq - b.seq);
      const owners = [...new Set(events.flatMap((e) => (e.userId === null ? [] : [e.userId])))];
      const endpoints = await trx
        .selectFrom('webhook_endpoints')
        .select(ENDPOINT_COLUMNS)
        .where((eb) => (owners.length === 0 ? eb('owner_user_id', 'is', null) : eb.or([eb('owner_user_id', 'is', null), eb('owner_user_id', 'in', owners)])))
        .execute();
      await insertDeliveries(trx, plan(events, endpoints.map(toEndpoint)));
      return rows.length;
    });
  }

  /**
   * Claims up to `limit` deliveries due at `now` whose lease is free or expired, leasing them until
   * `leaseUntil` under `leaseToken`, earliest due first.
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number): Promise<ClaimedDelivery[]> {
    // A read first: the claim is a write, which on SQLite would take the database's write lock every
    // second in every process even with nothing to send.
    const due = await this.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
    if (!due) return [];
    const claimed = await this.db
      .with(
        (w) => w('claim').materialized(),
        (db) =>
          db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', now)
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<=', now)]))
            .orderBy('next_attempt_at')
            .limit(limit)
            .$if(this.pg, (q) => q.forUpdate().skipLocked()),
      )
      .updateTable('webhook_deliveries')
      .set({ lease_until: leaseUntil, lease_token: leaseToken })
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .where('id', 'in', (eb) => eb.selectFrom('claim').select('id'))
      .returning(['id', 'endpoint_id', 'payload', 'created_at', 'attempt_count'])
      .execute();
    if (claimed.length === 0) return [];
    // An endpoint deleted since takes its deliveries with it: nothing is left to send to it.
    const endpoints = await this.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'secret'])
      .where(
        'id',
        'in',
        claimed.map((c) => c.endpoint_id),
      )
      .execute();
    const byId = new Map(endpoints.map((e) => [e.id, e]));
    return claimed.flatMap((c) => {
      const endpoint = byId.get(c.endpoint_id);
      if (!endpoint) return [];
      return [{ id: c.id, url: endpoint.url, secret: endpoint.secret, payload: c.payload, createdAt: c.created_at, attemptCount: Number(c.attempt_count), leaseToken }];
    });
  }

  /**
   * Records an attempt and the delivery's new state, only while `leaseToken` still holds the lease:
   * a worker whose lease expired (and whose delivery another worker claimed) changes nothing.
   * False when it did not.
   */
  async recordAttempt(id: string, leaseToken: string, outcome: AttemptOutcome): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const finished = outcome.status !== 'pending';
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempt_count: eb('attempt_count', '+', 1),
          status: outcome.status,
          next_attempt_at: outcome.nextAttemptAt,
          finished_at: finished ? outcome.attemptedAt : null,
          last_status_code: outcome.statusCode,
          last_error: outcome.error,
          lease_until: null,
          lease_token: null,
        }))
        .where('id', '=', id)
        .where('lease_token', '=', leaseToken)
        .where('status', '=', 'pending')
        .returning('attempt_count')
        .executeTakeFirst();
      if (!updated) return false;
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: id,
          attempt: Number(updated.attempt_count),
          attempted_at: outcome.attemptedAt,
          status_code: outcome.statusCode,
          error: outcome.error,
          duration_ms: Math.round(outcome.durationMs),
        })
        .execute();
      return true;
    });
  }

  /** Gives a claimed delivery back unattempted (the server is stopping): due again at once, anywhere. */
  async release(id: string, leaseToken: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ lease_until: null, lease_token: null }).where('id', '=', id).where('lease_token', '=', leaseToken).execute();
  }
}
