import type { Kysely, Transaction } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import type { DeviceRequestsTable } from '../db/device-tables.js';
import type { Tables } from '../db/tables.js';
import { lockOwner } from '../db/pages.js';
import { fewerCountedThan } from '../tokens/list-store.js';
import { insertToken, type NewToken } from '../tokens/store.js';

export type DeviceRequestRow = Omit<DeviceRequestsTable, 'lookups'> & { lookups: number };

/** What the approver chose, bound in the same step as the request becomes approved. */
export interface Approval {
  readonly approverId: string;
  readonly scopes: readonly string[];
  readonly days: number;
  readonly name: string | null;
}

/** How many lookups serve a user code; from the next one it answers as unknown (contract §13.6). */
export const MAX_LOOKUPS = 10;

/** SQL for device authorization requests (RFC 8628). Every transition is one conditional update. */
export class DeviceRequestStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * Stores a new pending request unless its address already holds `maxPending` unexpired pending
   * ones (false then). A user code taken by another pending request throws (the unique index).
   */
  async create(row: Omit<DeviceRequestRow, 'lookups'>, maxPending: number, now: string, event: AuditEvent): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { count } = await trx
        .selectFrom('device_requests')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('request_ip', '=', row.request_ip)
        .where('state', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      if (Number(count) >= maxPending) return false;
      await trx.insertInto('device_requests').values(row).execute();
      await recordAudit(trx, event);
      return true;
    });
  }

  async findByDigest(digest: string): Promise<DeviceRequestRow | undefined> {
    return this.db.selectFrom('device_requests').selectAll().where('device_code_digest', '=', digest).executeTakeFirst();
  }

  /** A poll at or after the interval: records it; false when another poll came between (compare-and-set on the last poll). */
  async recordPoll(id: string, previous: string | null, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('device_requests')
      .set({ last_poll_at: now })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('last_poll_at', previous === null ? 'is' : '=', previous)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** A poll too soon: the request's interval grows by `bySeconds`, for every later poll (RFC 8628 §3.5). */
  async slowDown(id: string, bySeconds: number, now: string): Promise<void> {
    await this.db
      .updateTable('device_requests')
      .set((eb) => ({ interval_s: eb('interval_s', '+', bySeconds), last_poll_at: now }))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  }

  /** The first poll after a denial: true once (`access_denied`), false after (`invalid_grant`). */
  async denialSeen(id: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('device_requests').set({ last_poll_at: now }).where('id', '=', id).where('state', '=', 'denied').where('last_poll_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** A pending, unexpired request by user code, counting the lookup; undefined past {@link MAX_LOOKUPS}. */
  async lookUp(userCode: string, now: string): Promise<DeviceRequestRow | undefined> {
    return this.db
      .updateTable('device_requests')
      .set((eb) => ({ lookups: eb('lookups', '+', 1) }))
      .where('user_code', '=', userCode)
      .where('state', '=', 'pending')
      .where('expires_at', '>', now)
      .where('lookups', '<', MAX_LOOKUPS)
      .returningAll()
      .executeTakeFirst();
  }

  /** The pending request of `userCode`, still unexpired (no lookup counted). */
  async pending(userCode: string, now: string): Promise<DeviceRequestRow | undefined> {
    return this.db.selectFrom('device_requests').selectAll().where('user_code', '=', userCode).where('state', '=', 'pending').where('expires_at', '>', now).executeTakeFirst();
  }

  /** pending → approved with the approver bound, or pending → denied; false when it was no longer pending. */
  async decide(id: string, decision: Approval | null, now: string, event: AuditEvent, also?: (trx: Transaction<Tables>) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('device_requests')
        .set(
          decision
            ? { state: 'approved', approver_id: decision.approverId, approved_scopes: JSON.stringify(decision.scopes), approved_days: decision.days, approved_name: decision.name }
            : { state: 'denied', last_poll_at: null },
        )
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await recordAudit(trx, event);
      await also?.(trx);
      return true;
    });
  }

  /**
   * approved → redeemed and the token stored, in one transaction: of polls at once exactly one
   * changes the row, the others find it redeemed. 'cap' when the user holds `cap` tokens already.
   */
  async redeem(id: string, token: NewToken, event: AuditEvent, cap: number): Promise<'redeemed' | 'gone' | 'cap'> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.updateTable('device_requests').set({ state: 'redeemed', token_id: token.id }).where('id', '=', id).where('state', '=', 'approved').executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return 'gone';
      await lockOwner(trx, 'users', token.userId);
      if (!(await fewerCountedThan(trx, { userId: token.userId }, token.createdAt, cap))) throw new CapReached();
      await insertToken(trx, token);
      await recordAudit(trx, event);
      return 'redeemed';
    }).catch((error: unknown) => {
      if (error instanceof CapReached) return 'cap' as const;
      throw error;
    });
  }

  /** Requests expired before `before`, whatever their state, in batches; the number deleted. */
  async prune(before: string, batch = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = this.db.selectFrom('device_requests').select('id').where('expires_at', '<', before).limit(batch);
      const deleted = Number((await this.db.deleteFrom('device_requests').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
      total += deleted;
      if (deleted < batch) return total;
    }
  }

  async count(): Promise<number> {
    const { count } = await this.db.selectFrom('device_requests').select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirstOrThrow();
    return Number(count);
  }
}

/** Rolls the redemption back when the owner's cap is reached. */
class CapReached extends Error {}
