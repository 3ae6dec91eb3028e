import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** A login whose password was right, waiting for its second factor (contract §12.4). */
export interface PendingLogin {
  /** SHA-256 of the `mfa_token`; the token itself is never stored. */
  readonly digest: string;
  readonly userId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

/** SQL for waiting logins and the attempts each allows (contract §12.6: 5, then dead). */
export interface PendingLoginStore {
  insert(login: PendingLogin): Promise<void>;
  /**
   * Reserves one attempt before the code is compared, in one statement: of N parallel attempts at
   * most `max` ever get the user id (and so a comparison), whatever their outcome. Undefined when
   * the token is unknown, expired at `now`, or out of attempts.
   */
  reserveAttempt(digest: string, now: string, max: number): Promise<{ readonly userId: string } | undefined>;
  /** The user of a live waiting login (unexpired at `now`, attempts left), without spending an attempt. */
  holder(digest: string, now: string, max: number): Promise<string | undefined>;
  /** Ends the waiting login on success: true for exactly one caller (the token is single-use). */
  consume(digest: string): Promise<boolean>;
  deleteExpired(now: string): Promise<number>;
}

export class SqlPendingLoginStore implements PendingLoginStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async insert(login: PendingLogin): Promise<void> {
    await this.db.insertInto('mfa_pending_logins').values({ digest: login.digest, user_id: login.userId, created_at: login.createdAt, expires_at: login.expiresAt }).execute();
  }

  async reserveAttempt(digest: string, now: string, max: number): Promise<{ readonly userId: string } | undefined> {
    const row = await this.db
      .updateTable('mfa_pending_logins')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('digest', '=', digest)
      .where('expires_at', '>', now)
      .where('attempts', '<', max)
      .returning('user_id')
      .executeTakeFirst();
    return row && { userId: row.user_id };
  }

  async holder(digest: string, now: string, max: number): Promise<string | undefined> {
    const row = await this.db.selectFrom('mfa_pending_logins').select('user_id').where('digest', '=', digest).where('expires_at', '>', now).where('attempts', '<', max).executeTakeFirst();
    return row?.user_id;
  }

  async consume(digest: string): Promise<boolean> {
    const result = await this.db.deleteFrom('mfa_pending_logins').where('digest', '=', digest).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async deleteExpired(now: string): Promise<number> {
    const result = await this.db.deleteFrom('mfa_pending_logins').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
