import { type Kysely, type Selectable, sql } from 'kysely';
import type { MfaFactorsTable } from '../../db/mfa-tables.js';
import type { Tables } from '../../db/tables.js';
import { fewerThan, lockOwner } from '../../db/pages.js';
import type { FactorWrites } from './factor-store.js';

/** A TOTP factor with its sealed secret: only the TOTP check reads it, never an answer. */
export interface TotpFactor {
  readonly id: string;
  readonly userId: string;
  readonly status: 'pending' | 'active';
  readonly name: string;
  readonly sealedSecret: string;
  /** The last step accepted; null before the first code. */
  readonly lastStep: number | null;
}

/** An enrolment that waits for its first code until `pendingUntil`. */
export interface NewPendingTotp {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly sealedSecret: string;
  readonly createdAt: string;
  readonly pendingUntil: string;
}

export type ConfirmOutcome = 'confirmed' | 'gone' | 'cap';

/** SQL for TOTP factors (contract §12.3, §12.6). */
export interface TotpStore {
  /** Stores a pending factor; a pending one the user already had is replaced and no longer confirms. */
  insertPending(factor: NewPendingTotp): Promise<void>;
  /** The user's factor `id`: active, or pending and not expired at `now`. */
  find(userId: string, id: string, now: string): Promise<TotpFactor | undefined>;
  /** The user's active TOTP factors, oldest first. */
  listActive(userId: string): Promise<TotpFactor[]>;
  /**
   * Activates a pending factor whose code for `step` was right, recording the step as accepted:
   * 'gone' when it is not pending any more (expired, replaced, confirmed meanwhile), 'cap' when the
   * user already has `max` active TOTP factors.
   */
  confirm(userId: string, id: string, step: number, name: string | null, at: string, max: number, also?: FactorWrites): Promise<ConfirmOutcome>;
  /**
   * Records `step` as accepted, in one compare-and-set statement: true only when it is later than
   * the stored last step, so of two uses of one code exactly one succeeds (RFC 6238 §5.2).
   */
  acceptStep(id: string, step: number, at: string): Promise<boolean>;
  /** Replaces a sealed secret (sealed again under the current key) if it is still `from`. */
  reseal(id: string, from: string, to: string): Promise<boolean>;
  /** Every stored secret, pending factors' included: the start-up check opens each. */
  listSealed(): Promise<{ readonly id: string; readonly sealedSecret: string }[]>;
}

const toFactor = (row: Pick<Selectable<MfaFactorsTable>, 'id' | 'user_id' | 'status' | 'name' | 'totp_secret' | 'totp_last_step'>): TotpFactor => ({
  id: row.id,
  userId: row.user_id,
  status: row.status,
  name: row.name,
  sealedSecret: row.totp_secret ?? '',
  // PostgreSQL's bigint arrives as a string.
  lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
});

const COLUMNS = ['id', 'user_id', 'status', 'name', 'totp_secret', 'totp_last_step'] as const;

export class SqlTotpStore implements TotpStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async insertPending(factor: NewPendingTotp): Promise<void> {
    const row = {
      id: factor.id,
      user_id: factor.userId,
      type: 'totp' as const,
      status: 'pending' as const,
      name: factor.name,
      created_at: factor.createdAt,
      pending_until: factor.pendingUntil,
      totp_secret: factor.sealedSecret,
    };
    // One statement over the partial unique index (one pending factor per user): two enrolments
    // at once leave one pending factor, the later, and never fail on each other.
    await this.db
      .insertInto('mfa_factors')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('user_id')
          // A literal, as in the index: SQLite matches a partial index only by the same predicate.
          .where('status', '=', sql.lit('pending'))
          .doUpdateSet({ id: row.id, name: row.name, created_at: row.created_at, pending_until: row.pending_until, totp_secret: row.totp_secret }),
      )
      .execute();
  }

  async find(userId: string, id: string, now: string): Promise<TotpFactor | undefined> {
    const row = await this.db
      .selectFrom('mfa_factors')
      .select(COLUMNS)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('type', '=', 'totp')
      .where((eb) => eb.or([eb('status', '=', 'active'), eb('pending_until', '>', now)]))
      .executeTakeFirst();
    return row && toFactor(row);
  }

  async listActive(userId: string): Promise<TotpFactor[]> {
    const rows = await this.db
      .selectFrom('mfa_factors')
      .select(COLUMNS)
      .where('user_id', '=', userId)
      .where('type', '=', 'totp')
      .where('status', '=', 'active')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toFactor);
  }

  async confirm(userId: string, id: string, step: number, name: string | null, at: string, max: number, also?: FactorWrites): Promise<ConfirmOutcome> {
    return this.db.transaction().execute(async (trx) => {
      // The user's row lock serialises confirmations and additions, so the cap holds under parallel ones.
      if (!(await lockOwner(trx, 'users', userId))) return 'gone';
      const active = trx.selectFrom('mfa_factors').select('id').where('user_id', '=', userId).where('type', '=', 'totp').where('status', '=', 'active');
      if (!(await fewerThan(active, max))) return 'cap';
      const result = await trx
        .updateTable('mfa_factors')
        .set((eb) => ({ status: 'active', name: name ?? eb.ref('name'), pending_until: null, totp_last_step: step }))
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('type', '=', 'totp')
        .where('status', '=', 'pending')
        .where('pending_until', '>', at)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return 'gone';
      await also?.(trx);
      return 'confirmed';
    });
  }

  async acceptStep(id: string, step: number, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('mfa_factors')
      .set({ totp_last_step: step, last_used_at: at })
      .where('id', '=', id)
      .where('type', '=', 'totp')
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async reseal(id: string, from: string, to: string): Promise<boolean> {
    const result = await this.db.updateTable('mfa_factors').set({ totp_secret: to }).where('id', '=', id).where('totp_secret', '=', from).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async listSealed(): Promise<{ readonly id: string; readonly sealedSecret: string }[]> {
    const rows = await this.db.selectFrom('mfa_factors').select(['id', 'totp_secret']).where('type', '=', 'totp').execute();
    return rows.map((row) => ({ id: row.id, sealedSecret: row.totp_secret ?? '' }));
  }
}
