import type { Kysely, Transaction } from 'kysely';
import { type ChangeTransaction, changeTransaction, recordChange } from '../changes/store.js';
import type { PasswordResetRequestsTable } from '../db/mail-tables.js';
import type { Tables } from '../db/tables.js';
import type { StoredUser } from './user-store.js';

type Executor = Kysely<Tables> | Transaction<Tables>;

/** A password reset request as received (its email normalized), with who sent it. */
export type ResetRequest = Omit<PasswordResetRequestsTable, 'seq'>;

/** SQL of the email flows: the user's address and its proof, reset requests, email-change requests. */
export class EmailStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Reads outside any transaction. */
  get reader(): Kysely<Tables> {
    return this.db;
  }

  /** Runs `work` in a transaction that may record changes (sessions ended, a user's email changed). */
  transaction<T>(work: (trx: ChangeTransaction) => Promise<T>): Promise<T> {
    return changeTransaction(this.db, work);
  }

  async findUser(db: Executor, id: string): Promise<StoredUser | undefined> {
    const row = await db.selectFrom('users').select(['id', 'email', 'username', 'created_at', 'password_hash', 'email_verified_at']).where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, email: row.email, username: row.username, createdAt: row.created_at, passwordHash: row.password_hash, emailVerifiedAt: row.email_verified_at };
  }

  async findUserByEmail(db: Executor, email: string): Promise<StoredUser | undefined> {
    const row = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    return row && this.findUser(db, row.id);
  }

  /**
   * Marks the user's email verified, only while it is still `email` (the address the link was
   * mailed to), and records the change so every instance drops what it cached of the user.
   * False when the address changed meanwhile.
   */
  async markVerified(trx: ChangeTransaction, userId: string, email: string, at: string): Promise<boolean> {
    const result = await trx.updateTable('users').set({ email_verified_at: at }).where('id', '=', userId).where('email', '=', email).executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return false;
    await recordChange(trx, 'user', userId, at, null);
    return true;
  }

  /** Sets the password of a user whose email is still `email`; the email counts as verified (the link proved it). */
  async resetPassword(trx: ChangeTransaction, userId: string, email: string, passwordHash: string, at: string): Promise<boolean> {
    const result = await trx
      .updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(at)) }))
      .where('id', '=', userId)
      .where('email', '=', email)
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return false;
    await recordChange(trx, 'user', userId, at, null);
    return true;
  }

  /** Changes a user's email, verified by the link that proved it. @throws a unique violation when the address is taken. */
  async changeEmail(trx: ChangeTransaction, userId: string, email: string, at: string): Promise<void> {
    await trx.updateTable('users').set({ email, email_verified_at: at }).where('id', '=', userId).execute();
    await recordChange(trx, 'user', userId, at, null);
  }

  /** Replaces the user's pending email change with the one whose confirmation mail is `mailId`. */
  async saveChangeRequest(trx: Executor, mailId: string, userId: string, sessionId: string, at: string): Promise<void> {
    await trx.deleteFrom('email_change_requests').where('user_id', '=', userId).execute();
    await trx.insertInto('email_change_requests').values({ mail_id: mailId, user_id: userId, session_id: sessionId, created_at: at }).execute();
  }

  /** The session that asked for the change mailed as `mailId`, removing the request; undefined when there is none. */
  async takeChangeRequest(trx: Executor, mailId: string): Promise<string | undefined> {
    const row = await trx.deleteFrom('email_change_requests').where('mail_id', '=', mailId).returning('session_id').executeTakeFirst();
    return row?.session_id;
  }

  /** Queues a reset request: the same single insert whether or not an account has the email. */
  async insertResetRequest(request: ResetRequest): Promise<void> {
    await this.db.insertInto('password_reset_requests').values(request).execute();
  }

  /** The oldest queued reset requests. */
  async pendingResetRequests(limit: number): Promise<Array<ResetRequest & { seq: number }>> {
    const rows = await this.db.selectFrom('password_reset_requests').selectAll().orderBy('seq').limit(limit).execute();
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  }

  /** Takes a queued reset request in `trx`: true for the one transaction (of any instance) that gets it. */
  async takeResetRequest(trx: Executor, seq: number): Promise<boolean> {
    const result = await trx.deleteFrom('password_reset_requests').where('seq', '=', seq).executeTakeFirst();
    return result.numDeletedRows === 1n;
  }
}
