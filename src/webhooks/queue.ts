import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit, type StoredAuditEvent, toStoredEvent } from '../audit/store.js';
import { isPostgres } from '../db/dialect.js';
import { openIn, WEBHOOK_SECRET } from '../db/sealed-columns.js';
import type { Tables } from '../db/tables.js';
import { NO_SEALING_KEYS, Sealer } from '../lib/sealed.js';
import { type BreakerChange, recordInBreaker } from './breaker.js';
import { type Candidate, pickFairly, type Share } from './fairness.js';
import { endpointCap, leasesHeld } from './leases.js';
import { type DeliveryStatus, ENDPOINT_COLUMNS, insertDeliveries, type NewDelivery, toEndpoint, type WebhookEndpoint } from './store.js';

/** An endpoint as the dispatcher matches it: its owner, types and creation time. */
export type DispatchEndpoint = Pick<WebhookEndpoint, 'id' | 'ownerUserId' | 'eventTypes' | 'createdAt'>;

/** A delivery a worker has claimed: what it needs to send it, and the lease it holds. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  /** True for an operator endpoint's delivery, which may take the slots reserved for them. */
  readonly operator: boolean;
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
   * `leaseUntil` under `leaseToken`: round-robin over owners, earliest due first within each
   * (fairness.ts), at most `share.forUsers` on user endpoints, at most `share.perOwner` leases per
   * user and {@link PER_ENDPOINT} per endpoint (one probe for an endpoint whose breaker is open, none
   * while it is paused), counting the leases other claims hold. The candidates are read first, then
   * leased by id in one UPDATE that checks again that each is still free: two claims racing for a
   * row (another instance, a cluster worker) never both take it, though each may lease up to a cap
   * for the same endpoint or owner.
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number, share: Share = { forUsers: limit, perOwner: Number.POSITIVE_INFINITY }): Promise<ClaimedDelivery[]> {
    // A read first: the claim is a write, which on SQLite would take the database's write lock every
    // second in every process even with nothing to send.
    const due = await this.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
    if (!due) return [];
    const claimed: Leased[] = [];
    let forUsers = share.forUsers;
    // A window of candidates all on endpoints or owners that reach their cap in it leaves slots
    // free: the next read passes those over, since their leases are now held.
    for (let round = 0; round < 4 && claimed.length < limit; round++) {
      const candidates = await this.candidates(now, limit * 4, { forUsers, perOwner: share.perOwner });
      const ids = pickFairly(candidates, limit - claimed.length, { forUsers, perOwner: share.perOwner });
      if (ids.length > 0) {
        const leased = await this.lease(ids, now, leaseUntil, leaseToken);
        const owners = new Map(candidates.map((c) => [c.id, c.owner_user_id]));
        forUsers -= leased.filter((l) => owners.get(l.id) !== null).length;
        claimed.push(...leased);
      }
      if (candidates.length < limit * 4) break;
    }
    if (claimed.length === 0) return [];
    // An endpoint deleted since takes its deliveries with it: nothing is left to send to it.
    const endpoints = await this.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'secret', 'owner_user_id'])
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
      const { url, owner_user_id } = endpoint;
      return [{ id: c.id, url, secret: openIn(this.sealer, WEBHOOK_SECRET, endpoint.id, endpoint.secret), operator: owner_user_id === null, payload: c.payload, createdAt: c.created_at, attemptCount: Number(c.attempt_count), leaseToken }];
    });
  }

  /**
   * Due, free deliveries on endpoints below their cap and not paused, of owners below theirs,
   * earliest first, with the leases each endpoint and owner holds.
   */
  private candidates(now: string, limit: number, { forUsers, perOwner }: Share): Promise<Candidate[]> {
    const held = leasesHeld(now);
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select((eb) => ['d.id', 'd.endpoint_id', 'e.owner_user_id', held.onEndpoint(eb).as('busy'), endpointCap(eb).as('cap'), held.byOwner(eb).as('owner_busy')])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', now)]))
      .where((eb) => eb.or([eb('e.paused_until', 'is', null), eb('e.paused_until', '<=', now)]))
      .where((eb) => eb(held.onEndpoint(eb), '<', endpointCap(eb)))
      .$if(Number.isFinite(perOwner), (q) => q.where((eb) => eb.or([eb('e.owner_user_id', 'is', null), eb(held.byOwner(eb), '<', perOwner)])))
      // Users' share spent: only operator endpoints' deliveries may fill the window.
      .$if(forUsers <= 0, (q) => q.where('e.owner_user_id', 'is', null))
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
   * False when it did not. The endpoint's breaker counts the attempt in the same transaction, and
   * `audit` of a change of it (paused, resumed) is recorded there too.
   */
  async recordAttempt(id: string, leaseToken: string, outcome: AttemptOutcome, audit?: (change: BreakerChange) => AuditEvent): Promise<boolean> {
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
        .returning(['attempt_count', 'endpoint_id'])
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
      const ended = Date.parse(outcome.attemptedAt) + outcome.durationMs;
      const change = await recordInBreaker(trx, updated.endpoint_id, outcome.status === 'succeeded', ended);
      if (change && audit) await recordAudit(trx, audit(change));
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
