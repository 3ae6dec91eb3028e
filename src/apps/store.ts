import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { changeTransaction, recordChange } from '../changes/store.js';
import { isForeignKeyViolation } from '../db/dialect.js';
import { fewerThan, lockOwner, newestFirst } from '../db/pages.js';
import type { PageRequest } from '../lib/pages.js';
import { fewerCountedThan } from '../tokens/list-store.js';
import type { AppsTable, Tables } from '../db/tables.js';
import { insertToken, type NewToken } from '../tokens/store.js';
import { type ActiveTokens, activeTokens } from '../tokens/active-count-store.js';

/** A registered application or game. */
export interface App {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly description: string;
  readonly createdAt: string;
}

const toApp = (row: AppsTable): App => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
});

/** SQL for apps. */
export class AppStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * Inserts the app and its first token atomically, with their audit events: no app is ever left
   * without its token. False, and nothing written, when its owner already has `cap` apps.
   */
  async insertWithToken(app: App, token: NewToken, events: readonly AuditEvent[] = [], cap?: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (cap !== undefined) {
        await lockOwner(trx, 'users', app.userId);
        if (!(await fewerThan(trx.selectFrom('apps').select('id').where('user_id', '=', app.userId), cap))) return false;
      }
      await trx
        .insertInto('apps')
        .values({ id: app.id, user_id: app.userId, name: app.name, description: app.description, created_at: app.createdAt })
        .execute();
      await insertToken(trx, token);
      await recordAudit(trx, events);
      return true;
    });
  }

  /**
   * Adds a token to an app owned by `token.userId`. False when there is no such app, also when a
   * concurrent delete wins the race (the foreign key makes an orphan token impossible); `full`
   * when the app already has `cap` tokens that count against it.
   */
  async insertToken(token: NewToken, event?: AuditEvent, cap?: number): Promise<boolean | 'full'> {
    if (token.appId === null) throw new TypeError('an app token needs an app id');
    const appId = token.appId;
    try {
      return await this.db.transaction().execute(async (trx) => {
        // The app's row is written first: it is the lock the app's cap is counted under.
        if (!(await lockOwner(trx, 'apps', appId))) return false;
        const app = await trx.selectFrom('apps').select('id').where('id', '=', appId).where('user_id', '=', token.userId).executeTakeFirst();
        if (!app) return false;
        if (cap !== undefined && !(await fewerCountedThan(trx, { appId }, token.createdAt, cap))) return 'full';
        await insertToken(trx, token);
        if (event) await recordAudit(trx, event);
        return true;
      });
    } catch (error) {
      // PostgreSQL: the app was deleted by a transaction that committed after our check.
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  }

  /** A user's apps, newest first, a page at a time (all of them without a page). */
  async listByUser(userId: string, page?: PageRequest): Promise<App[]> {
    const rows = await newestFirst(this.db.selectFrom('apps').selectAll().where('user_id', '=', userId), 'apps', page).execute();
    return rows.map(toApp);
  }

  async find(id: string, userId: string): Promise<App | undefined> {
    const row = await this.db.selectFrom('apps').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return row && toApp(row);
  }

  /**
   * Deletes the app and, by cascade, every token it has. `revoked`, when given, learns how many of
   * them were active (counted in the same transaction, so only when someone asks).
   */
  async delete(id: string, userId: string, at: string, event?: AuditEvent, revoked?: (tokens: ActiveTokens) => void): Promise<boolean> {
    const outcome = await changeTransaction(this.db, async (trx) => {
      const active = revoked ? await activeTokens(trx, { appId: id }, at) : null;
      const result = await trx.deleteFrom('apps').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      if (result.numDeletedRows === 0n) return null;
      await recordChange(trx, 'app', id, at, { type: 'app.deleted', data: { app_id: id, user_id: userId } });
      if (event) await recordAudit(trx, event);
      return { active };
    });
    if (outcome?.active) revoked?.(outcome.active);
    return outcome !== null;
  }
}
