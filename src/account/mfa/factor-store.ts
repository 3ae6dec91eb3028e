import type { Kysely, Transaction } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { lockOwner } from '../../db/pages.js';
import { type ChangeTransaction, changeTransaction } from '../../changes/store.js';

/** A factor as its owner's list shows it (contract §12.3): never a secret or a public key. */
export interface FactorSummary {
  readonly id: string;
  readonly type: 'totp' | 'webauthn';
  readonly name: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  /** A discoverable credential that verified the user: it can sign in without a password. */
  readonly passkey: boolean;
  /** The BE flag: the credential may be synced across devices. */
  readonly synced: boolean;
}

export type RemoveOutcome = 'removed' | 'absent' | 'last';

/**
 * What belongs to a factor change besides the change itself (its audit event and notice, the first
 * recovery codes, sessions ended): the store runs it in the change's own transaction, so a factor
 * is never added or removed without its record, nor recorded without the change.
 */
export type FactorWrites = (trx: Transaction<Tables>) => Promise<void>;
export type FactorChangeWrites = (trx: ChangeTransaction) => Promise<void>;

/** SQL for what is common to every kind of factor (contract §12.3, §12.7). */
export interface FactorStore {
  /** The user's active factors, oldest first. */
  list(userId: string): Promise<FactorSummary[]>;
  /** True when the user has at least one active factor. */
  hasActive(userId: string): Promise<boolean>;
  /** Renames an active factor of the user; false when there is none by that id. */
  rename(userId: string, id: string, name: string): Promise<boolean>;
  /** Removes an active factor, with `also` in the same transaction; with `keepOne` (MFA_REQUIRED) the user's last one stays: 'last'. */
  remove(userId: string, id: string, keepOne: boolean, also?: FactorChangeWrites): Promise<RemoveOutcome>;
  /**
   * The operator's reset: every factor, recovery code, waiting login and lock-out of the user, with
   * what `also` writes (sessions ended, events) in the same transaction. Returns the factors removed.
   */
  removeAll(userId: string, also?: (trx: ChangeTransaction, removed: number) => Promise<void>): Promise<number>;
  /** Deletes pending TOTP factors whose time ran out. */
  deleteExpiredPending(now: string): Promise<number>;
}

export class SqlFactorStore implements FactorStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async list(userId: string): Promise<FactorSummary[]> {
    const rows = await this.db
      .selectFrom('mfa_factors')
      .select(['id', 'type', 'name', 'created_at', 'last_used_at', 'discoverable', 'user_verified', 'backup_eligible'])
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      type: row.type,
      name: row.name,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      passkey: row.discoverable === 1 && row.user_verified === 1,
      synced: row.backup_eligible === 1,
    }));
  }

  async hasActive(userId: string): Promise<boolean> {
    const row = await this.db.selectFrom('mfa_factors').select('id').where('user_id', '=', userId).where('status', '=', 'active').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async rename(userId: string, id: string, name: string): Promise<boolean> {
    const result = await this.db.updateTable('mfa_factors').set({ name }).where('id', '=', id).where('user_id', '=', userId).where('status', '=', 'active').executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async remove(userId: string, id: string, keepOne: boolean, also?: FactorChangeWrites): Promise<RemoveOutcome> {
    return changeTransaction(this.db, async (trx) => {
      // The user's row lock: two removals at once cannot each see the other factor and remove both.
      if (!(await lockOwner(trx, 'users', userId))) return 'absent';
      const active = trx.selectFrom('mfa_factors').select('id').where('user_id', '=', userId).where('status', '=', 'active');
      if (!(await active.where('id', '=', id).executeTakeFirst())) return 'absent';
      if (keepOne && !(await active.where('id', '!=', id).limit(1).executeTakeFirst())) return 'last';
      await trx.deleteFrom('mfa_factors').where('id', '=', id).execute();
      await also?.(trx);
      return 'removed';
    });
  }

  async removeAll(userId: string, also?: (trx: ChangeTransaction, removed: number) => Promise<void>): Promise<number> {
    return changeTransaction(this.db, async (trx) => {
      // The user's row lock: an enrolment or removal under way finishes before, or sees the reset.
      await lockOwner(trx, 'users', userId);
      const result = await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).executeTakeFirst();
      await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
      await trx.deleteFrom('mfa_pending_logins').where('user_id', '=', userId).execute();
      await trx.deleteFrom('mfa_lockouts').where('user_id', '=', userId).execute();
      const removed = Number(result.numDeletedRows);
      await also?.(trx, removed);
      return removed;
    });
  }

  async deleteExpiredPending(now: string): Promise<number> {
    const result = await this.db.deleteFrom('mfa_factors').where('status', '=', 'pending').where('pending_until', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
