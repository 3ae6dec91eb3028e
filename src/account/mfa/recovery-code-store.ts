import type { Kysely, Transaction } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { lockOwner } from '../../db/pages.js';
import type { FactorWrites } from './factor-store.js';

/** SQL for recovery codes, kept as SHA-256 digests (contract §12.3). */
export interface RecoveryCodeStore {
  /** Replaces the user's set: the old codes stop working in the same transaction, which `also` writes in too. */
  replace(userId: string, digests: readonly string[], at: string, also?: FactorWrites): Promise<void>;
  /** Uses a code: true for exactly one of any number of parallel uses (the row is deleted). */
  consume(userId: string, digest: string): Promise<boolean>;
  /** How many unused codes the user has. */
  remaining(userId: string): Promise<number>;
}

/** Replaces the user's set in `trx`, which holds the user's row lock (a first factor's activation, a regeneration). */
export async function replaceRecoveryCodes(trx: Transaction<Tables>, userId: string, digests: readonly string[], at: string): Promise<void> {
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  if (digests.length === 0) return;
  await trx
    .insertInto('mfa_recovery_codes')
    .values(digests.map((digest) => ({ user_id: userId, digest, created_at: at })))
    .execute();
}

export class SqlRecoveryCodeStore implements RecoveryCodeStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async replace(userId: string, digests: readonly string[], at: string, also?: FactorWrites): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // Two regenerations at once must not leave both sets: the user's row lock orders them.
      if (!(await lockOwner(trx, 'users', userId))) return;
      await replaceRecoveryCodes(trx, userId, digests, at);
      await also?.(trx);
    });
  }

  async consume(userId: string, digest: string): Promise<boolean> {
    // The delete is the single use: of parallel uses, only one finds the row.
    const result = await this.db.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).where('digest', '=', digest).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async remaining(userId: string): Promise<number> {
    const row = await this.db.selectFrom('mfa_recovery_codes').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
