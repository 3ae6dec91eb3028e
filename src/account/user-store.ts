import type { Kysely, Transaction } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { changeTransaction, recordChange } from '../changes/store.js';
import type { Tables } from '../db/tables.js';
import { type ActiveTokens, activeTokens } from '../tokens/active-count-store.js';

/** A user as the rest of the service sees it. */
export interface User {
  readonly id: string;
  readonly email: string;
  readonly username: string;
  readonly createdAt: string;
}

export interface UserWithHash extends User {
  readonly passwordHash: string;
}

/** A user as stored: with when their email was proven (null: not yet). */
export interface StoredUser extends UserWithHash {
  readonly emailVerifiedAt: string | null;
}

const COLUMNS = ['id', 'email', 'username', 'created_at', 'password_hash', 'email_verified_at'] as const;

function toUser(row: { id: string; email: string; username: string; created_at: string; password_hash: string; email_verified_at: string | null }): StoredUser {
  return { id: row.id, email: row.email, username: row.username, createdAt: row.created_at, passwordHash: row.password_hash, emailVerifiedAt: row.email_verified_at };
}

/** SQL for users. */
export class UserStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * Inserts a user, with the audit event of its creation when there is one.
   * @throws a unique violation when the email or (case-insensitive) username is taken.
   */
  async insert(user: UserWithHash, event?: AuditEvent, also?: (trx: Transaction<Tables>) => Promise<void>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('users')
        .values({
          id: user.id,
          email: user.email,
          username: user.username,
          username_key: user.username.toLowerCase(),
          password_hash: user.passwordHash,
          created_at: user.createdAt,
        })
        .execute();
      if (event) await recordAudit(trx, event);
      await also?.(trx);
    });
  }

  async findByEmail(email: string): Promise<StoredUser | undefined> {
    const row = await this.db.selectFrom('users').select(COLUMNS).where('email', '=', email).executeTakeFirst();
    return row && toUser(row);
  }

  /** By username, compared without case as uniqueness is. */
  async findByUsername(username: string): Promise<StoredUser | undefined> {
    const row = await this.db.selectFrom('users').select(COLUMNS).where('username_key', '=', username.toLowerCase()).executeTakeFirst();
    return row && toUser(row);
  }

  async findById(id: string): Promise<StoredUser | undefined> {
    const row = await this.db.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  /** Which of the two unique fields are already taken. */
  async findTaken(email: string, username: string): Promise<{ email: boolean; username: boolean }> {
    const rows = await this.db
      .selectFrom('users')
      .select(['email', 'username_key'])
      .where((eb) => eb.or([eb('email', '=', email), eb('username_key', '=', username.toLowerCase())]))
      .execute();
    return {
      email: rows.some((r) => r.email === email),
      username: rows.some((r) => r.username_key === username.toLowerCase()),
    };
  }

  async list(): Promise<User[]> {
    const rows = await this.db.selectFrom('users').select(COLUMNS).orderBy('created_at').execute();
    return rows.map(toUser);
  }

  /**
   * Replaces the password hash, only while it is still `previous`: an upgrade of the hash at login
   * must never undo a password change that committed meanwhile. False when it was not.
   */
  async upgradePasswordHash(id: string, passwordHash: string, previous: string): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ password_hash: passwordHash })
      .where('id', '=', id)
      .where('password_hash', '=', previous)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Deletes the user; sessions, apps and tokens go with it (foreign keys cascade). `revoked`, when
   * given, learns how many of the tokens were active (counted in the same transaction).
   */
  async delete(id: string, at: string, event?: AuditEvent, revoked?: (tokens: ActiveTokens) => void): Promise<boolean> {
    const outcome = await changeTransaction(this.db, async (trx) => {
      const active = revoked ? await activeTokens(trx, { userId: id }, at) : null;
      const result = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      if (result.numDeletedRows === 0n) return null;
      await recordChange(trx, 'user', id, at, { type: 'user.deleted', data: { user_id: id } });
      if (event) await recordAudit(trx, event);
      return { active };
    });
    if (outcome?.active) revoked?.(outcome.active);
    return outcome !== null;
  }
}
