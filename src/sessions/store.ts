import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { recordChange } from '../changes/store.js';
import type { Tables } from '../db/tables.js';

/** The server side of a user token: one per login, revoked at logout. */
export interface Session {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
}

/** SQL for sessions. */
export class SessionStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Inserts a session, with the audit event of the login that opened it when there is one. */
  async insert(session: Omit<Session, 'revokedAt'>, event?: AuditEvent): Promise<void> {
    const values = { id: session.id, user_id: session.userId, created_at: session.createdAt, expires_at: session.expiresAt };
    if (!event) {
      await this.db.insertInto('sessions').values(values).execute();
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('sessions').values(values).execute();
      await recordAudit(trx, event);
    });
  }

  async findById(id: string): Promise<Session | undefined> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return (
      row && { id: row.id, userId: row.user_id, createdAt: row.created_at, expiresAt: row.expires_at, revokedAt: row.revoked_at }
    );
  }

  /** Revokes an active session; false if it was already revoked or does not exist. */
  async revoke(id: string, at: string, event?: AuditEvent): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returning('user_id')
        .executeTakeFirst();
      if (!revoked) return false;
      await recordChange(trx, 'session', id, at, { type: 'session.revoked', data: { session_id: id, user_id: revoked.user_id } });
      if (event) await recordAudit(trx, event);
      return true;
    });
  }

  /** Removes sessions that expired before `before`; they can never be used again. Returns how many. */
  async deleteExpired(before: string): Promise<number> {
    const result = await this.db.deleteFrom('sessions').where('expires_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
