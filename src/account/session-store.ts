import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { type AuthMethod, parseAmr } from '../lib/amr.js';
import { recordAudit } from '../audit/store.js';
import { type ChangeTransaction, changeTransaction, recordChange } from '../changes/store.js';
import { isPostgres } from '../db/dialect.js';
import type { SessionsTable, Tables } from '../db/tables.js';
import { newestFirst } from '../db/pages.js';
import type { PageRequest } from '../lib/pages.js';

/** Rolls back a password change whose session was ended by a change that committed first. */
const SESSION_ENDED = new Error('the session was ended meanwhile');

/** The server side of a user token: one per login, revoked at logout. */
export interface Session {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
}

/** A session as its owner's list shows it. */
export interface SessionDetails extends Session {
  readonly clientAddress: string | null;
  readonly userAgent: string | null;
  readonly lastUsedAt: string | null;
  /** RFC 8176 methods of the session's newest token (contract §12.4). */
  readonly amr: readonly AuthMethod[];
  /** The last primary or step-up authentication. */
  readonly authTime: string;
}

/** How a session's user authenticated: a password login at its creation when not given. */
export interface SessionAuthentication {
  readonly amr: readonly AuthMethod[];
  readonly authTime: string;
}

/** A session to insert; where it was opened is unknown for sessions made outside a request. */
export type NewSession = Omit<Session, 'revokedAt'> & { readonly clientAddress?: string | null; readonly userAgent?: string | null; readonly auth?: SessionAuthentication };

const toSession = (row: SessionsTable): SessionDetails => ({
  id: row.id,
  userId: row.user_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  clientAddress: row.client_address,
  userAgent: row.user_agent,
  lastUsedAt: row.last_used_at,
  amr: parseAmr(row.amr),
  authTime: row.auth_time ?? row.created_at,
});

const toRow = (session: NewSession) => ({
  id: session.id,
  user_id: session.userId,
  created_at: session.createdAt,
  expires_at: session.expiresAt,
  client_address: session.clientAddress ?? null,
  user_agent: session.userAgent ?? null,
  amr: (session.auth?.amr ?? ['pwd']).join(' '),
  auth_time: session.auth?.authTime ?? session.createdAt,
});

/** Revokes the given active sessions of a user in `trx`, each with its change; returns the ids revoked. */
async function revokeWhere(trx: ChangeTransaction, userId: string, at: string, only: { id?: string; except?: string }): Promise<string[]> {
  let query = trx.updateTable('sessions').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', at);
  if (only.id !== undefined) query = query.where('id', '=', only.id);
  if (only.except !== undefined) query = query.where('id', '!=', only.except);
  const rows = await query.returning('id').execute();
  for (const { id } of rows) {
    await recordChange(trx, 'session', id, at, { type: 'session.revoked', data: { session_id: id, user_id: userId } });
  }
  return rows.map((r) => r.id);
}

/** The audit events of a revocation, given the sessions it actually ended (none when it ended none). */
export type SessionEvents = (revoked: readonly string[]) => readonly AuditEvent[];
const none: SessionEvents = () => [];

export async function revokeAndRecord(trx: ChangeTransaction, userId: string, at: string, only: { id?: string; except?: string }, events: SessionEvents): Promise<string[]> {
  const revoked = await revokeWhere(trx, userId, at, only);
  await recordAudit(trx, events(revoked));
  return revoked;
}

/** SQL for sessions. */
export class SessionStore {
  private readonly pg: boolean;

  constructor(private readonly db: Kysely<Tables>) {
    this.pg = isPostgres(db);
  }

  /** Inserts a session, with the audit event of the login that opened it when there is one. */
  async insert(session: NewSession, event?: AuditEvent): Promise<void> {
    if (!event) {
      await this.db.insertInto('sessions').values(toRow(session)).execute();
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('sessions').values(toRow(session)).execute();
      await recordAudit(trx, event);
    });
  }

  /**
   * Inserts a session only while the user's password hash is still `passwordHash`, the one the
   * login verified: a login racing a password change must not open a session with the old
   * password after the change ended every other one. False when the hash changed (or the user went).
   */
  async insertForPassword(session: NewSession, passwordHash: string, event?: AuditEvent): Promise<boolean> {
    const row = toRow(session);
    return this.db.transaction().execute(async (trx) => {
      // PostgreSQL reads the hash as of the statement, past a password change not yet committed.
      // Locking the user's row first makes one wait for the other: a change that commits first
      // leaves nothing to insert; one that comes after sees this session and ends it. (SQLite
      // runs one write transaction at a time.)
      if (this.pg) {
        const current = await trx.selectFrom('users').select('id').where('id', '=', row.user_id).where('password_hash', '=', passwordHash).forShare().executeTakeFirst();
        if (!current) return false;
      }
      const result = await trx
        .insertInto('sessions')
        .columns(['id', 'user_id', 'created_at', 'expires_at', 'client_address', 'user_agent', 'amr', 'auth_time'])
        .expression((eb) =>
          eb
            .selectFrom('users')
            .select([
              eb.val(row.id).as('id'),
              'users.id as user_id',
              eb.val(row.created_at).as('created_at'),
              eb.val(row.expires_at).as('expires_at'),
              eb.cast<string | null>(eb.val(row.client_address), 'text').as('client_address'),
              eb.cast<string | null>(eb.val(row.user_agent), 'text').as('user_agent'),
              eb.val(row.amr).as('amr'),
              eb.val(row.auth_time).as('auth_time'),
            ])
            .where('users.id', '=', row.user_id)
            .where('users.password_hash', '=', passwordHash),
        )
        .executeTakeFirst();
      const inserted = Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
      if (inserted && event) await recordAudit(trx, event);
      return inserted;
    });
  }

  async findById(id: string): Promise<SessionDetails | undefined> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toSession(row);
  }

  /** A user's sessions that are neither revoked nor expired at `now`, newest first, a page at a time (all without a page). */
  async listActive(userId: string, now: string, page?: PageRequest): Promise<SessionDetails[]> {
    const query = this.db.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now);
    const rows = await newestFirst(query, 'sessions', page).execute();
    return rows.map(toSession);
  }

  /** Revokes an active session; false if it was already revoked or does not exist. */
  async revoke(id: string, at: string, event?: AuditEvent): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const revoked = await trx.updateTable('sessions').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).returning('user_id').executeTakeFirst();
      if (!revoked) return false;
      await recordChange(trx, 'session', id, at, { type: 'session.revoked', data: { session_id: id, user_id: revoked.user_id } });
      if (event) await recordAudit(trx, event);
      return true;
    });
  }

  /**
   * Revokes one active session of `userId`; false when it is not theirs, not active, or unknown.
   * `events` names the audit events of the sessions actually ended, written in the same transaction.
   */
  async revokeOwned(id: string, userId: string, at: string, events: SessionEvents = none): Promise<boolean> {
    const revoked = await changeTransaction(this.db, (trx) => revokeAndRecord(trx, userId, at, { id }, events));
    return revoked.length > 0;
  }

  /** Revokes every active session of `userId` but `keep`; returns the ids revoked. */
  async revokeOthers(userId: string, keep: string, at: string, events: SessionEvents = none): Promise<string[]> {
    return changeTransaction(this.db, (trx) => revokeAndRecord(trx, userId, at, { except: keep }, events));
  }

  /**
   * Sets a user's password hash and revokes every other session of theirs in one transaction: a
   * password changed because it leaked must never leave a session opened with it alive. Null, and
   * nothing changed, when the session `keep` was ended meanwhile: two changes racing from two
   * sessions both answered 204, and the one committed last (from a session the first had ended)
   * set the password. The user row is locked first, as every password change and login does, so
   * the session is read after any change that committed before this one.
   */
  async replacePassword(userId: string, passwordHash: string, keep: string, at: string, events: SessionEvents = none, also?: (trx: ChangeTransaction) => Promise<void>): Promise<string[] | null> {
    try {
      return await changeTransaction(this.db, async (trx) => {
        await trx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
        const live = await trx.selectFrom('sessions').select('id').where('id', '=', keep).where('revoked_at', 'is', null).executeTakeFirst();
        if (!live) throw SESSION_ENDED;
        const revoked = await revokeAndRecord(trx, userId, at, { except: keep }, events);
        await also?.(trx);
        return revoked;
      });
    } catch (error) {
      if (error === SESSION_ENDED) return null;
      throw error;
    }
  }

  /**
   * Records a step-up (contract §12.5) on an active session, with its audit event and a change for
   * every instance: its methods, `auth_time`, and its end, now its newest token's. False when it ended.
   */
  async reauthenticate(id: string, auth: SessionAuthentication, expiresAt: string, event: AuditEvent): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const update = trx.updateTable('sessions').set({ amr: auth.amr.join(' '), auth_time: auth.authTime, expires_at: expiresAt });
      const result = await update.where('id', '=', id).where('revoked_at', 'is', null).where('expires_at', '>', auth.authTime).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await recordAudit(trx, event);
      await recordChange(trx, 'session', id, auth.authTime, null);
      return true;
    });
  }

  /** Records when sessions were last used; never moves a time backwards. */
  async recordUsage(uses: ReadonlyMap<string, string>): Promise<void> {
    if (uses.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of uses) {
        await trx
          .updateTable('sessions')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
          .execute();
      }
    });
  }

  /** Removes sessions that expired before `before`; they can never be used again. Returns how many. */
  async deleteExpired(before: string): Promise<number> {
    const result = await this.db.deleteFrom('sessions').where('expires_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
