import type { ExpressionBuilder, Kysely } from 'kysely';
import { type StoredAuditEvent, toStoredEvent } from '../audit/store.js';
import { isPostgres } from '../db/dialect.js';
import { openIn, WEBHOOK_SECRET } from '../db/sealed-columns.js';
import type { Tables, WebhookDeliveriesTable } from '../db/tables.js';
import { NO_SEALING_KEYS, Sealer } from '../lib/sealed.js';
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
 * Attempts one endpoint may have in flight at once, across every instance: a slow or dead receiver
 * holds at most this many of the senders' slots, so it cannot delay everyone else's deliveries.
 */
export const PER_ENDPOINT = 2;

/**
 * The outbox's SQL. Several instances (and cluster workers on one SQLite file) never take the same
 * event or the same due delivery. An event claim is one atomic statement: on SQLite the UPDATE holds
 * the database's write lock, on PostgreSQL the inner SELECT locks its rows and skips rows another
 * claim holds (FOR UPDATE SKIP LOCKED). That SELECT is a MATERIALIZED CTE, run once: as a subquery
 * of the UPDATE, PostgreSQL may rescan it per row, and each rescan skips the rows the last one
 * locked and returns new ones, so one claim took every row whatever its limit.
 */
export class WebhookQueue {
  private readonly pg: boolean;

  constructor(
    private readonly db: Kysely<Tables>,
    /** Opens endpoint secrets sealed under KEY_ENCRYPTION_KEY. */
    private readonly sealer = new Sealer(NO_SEALING_KEYS),
  ) {
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
   * `leaseUntil` under `leaseToken`, earliest due first, and at most {@link PER_ENDPOINT} per endpoint
   * counting the leases other claims hold. The candidates are read first, then leased by id in one
   * UPDATE that checks again that each is still free: two claims racing for a row (another
   * instance, a cluster worker) never both take it, though each may lease up to the cap for the
   * same endpoint.
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number): Promise<ClaimedDelivery[]> {
    // A read first: the claim is a write, which on SQLite would take the database's write lock every
    // second in every process even with nothing to send.
    const due = await this.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
    if (!due) return [];
    const claimed: Leased[] = [];
    // A window of candidates all on endpoints that reach their cap in it leaves slots free: the next
    // read passes those endpoints over, since their leases are now held.
    for (let round = 0; round < 4 && claimed.length < limit; round++) {
      const candidates = await this.candidates(now, limit * 4);
      const ids = pickPerEndpoint(candidates, limit - claimed.length);
      if (ids.length > 0) claimed.push(...(await this.lease(ids, now, leaseUntil, leaseToken)));
      if (candidates.length < limit * 4) break;
    }
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
      return [{ id: c.id, url: endpoint.url, secret: openIn(this.sealer, WEBHOOK_SECRET, endpoint.id, endpoint.secret), payload: c.payload, createdAt: c.created_at, attemptCount: Number(c.attempt_count), leaseToken }];
    });
  }

  /** Due, free deliveries on endpoints below their cap, earliest first, with the leases each endpoint holds. */
  private candidates(now: string, limit: number) {
    // Leases held on the candidate's endpoint: a probe of the index on leased pending deliveries.
    const leased = (eb: ExpressionBuilder<Tables & { d: WebhookDeliveriesTable }, 'd'>) =>
      eb
        .selectFrom('webhook_deliveries as b')
        .select((b) => b.fn.countAll<number | string>().as('n'))
        .whereRef('b.endpoint_id', '=', 'd.endpoint_id')
        .where('b.status', '=', 'pending')
        .where('b.lease_until', '>', now);
    return this.db
      .selectFrom('webhook_deliveries as d')
      .select((eb) => ['d.id', 'd.endpoint_id', leased(eb).as('busy')])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((w) => w.or([w('d.lease_until', 'is', null), w('d.lease_until', '<=', now)]))
      .where((eb) => eb(leased(eb), '<', PER_ENDPOINT))
      .orderBy('d.next_attempt_at')
      .limit(limit)
      .execute();
  }

  /** Leases the deliveries among `ids` that are still free: a row another claim took meanwhile is left out. */
  private lease(ids: string[], now: string, leaseUntil: string, leaseToken: string): Promise<Leased[]> {
    return this.db
      .updateTable('webhook_deliveries')
      .set({ lease_until: leaseUntil, lease_token: leaseToken })
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .returning(['id', 'endpoint_id', 'payload', 'created_at', 'attempt_count'])
      .execute();
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

interface Leased {
  readonly id: string;
  readonly endpoint_id: string;
  readonly payload: string;
  readonly created_at: string;
  readonly attempt_count: number | string;
}

/** Up to `limit` candidates, in order, no endpoint past {@link PER_ENDPOINT} counting the leases it holds. */
function pickPerEndpoint(candidates: ReadonlyArray<{ id: string; endpoint_id: string; busy: number | string | null }>, limit: number): string[] {
  const leases = new Map<string, number>();
  const ids: string[] = [];
  for (const c of candidates) {
    const held = leases.get(c.endpoint_id) ?? Number(c.busy);
    if (held >= PER_ENDPOINT || ids.length >= limit) continue;
    leases.set(c.endpoint_id, held + 1);
    ids.push(c.id);
  }
  return ids;
}
