import { type Kysely, sql, type Transaction } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { ChangesTable, Tables } from '../db/tables.js';

export type ChangeKind = ChangesTable['kind'];

export interface Change {
  readonly id: number;
  readonly kind: ChangeKind;
  readonly ref: string;
}

/** Any number fixed for the life of the schema: the advisory lock that orders change transactions. */
const CHANGE_LOCK = 7_277_001;

/**
 * Appends a change inside the caller's transaction, so the change and its record commit together.
 *
 * Readers fetch `id > last id seen`, which is only safe if ids become visible in order. SQLite has
 * one writer at a time; on PostgreSQL two transactions could commit out of id order, so change
 * transactions take a transaction-scoped advisory lock before allocating the id.
 */
export async function recordChange(trx: Transaction<Tables>, kind: ChangeKind, ref: string, at: string): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(${CHANGE_LOCK})`.execute(trx);
  await trx.insertInto('changes').values({ kind, ref, created_at: at }).execute();
}

/** Reads the change log. */
export class ChangeStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Changes with an id above `afterId`, oldest first. */
  async listAfter(afterId: number): Promise<Change[]> {
    const rows = await this.db
      .selectFrom('changes')
      .select(['id', 'kind', 'ref'])
      .where('id', '>', afterId)
      .orderBy('id')
      .execute();
    // PostgreSQL returns bigint as a string.
    return rows.map((r) => ({ id: Number(r.id), kind: r.kind, ref: r.ref }));
  }

  /** The newest change id, or 0. */
  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('changes')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /** Deletes entries older than `before`; every live instance has long since read them. */
  async deleteBefore(before: string): Promise<void> {
    await this.db.deleteFrom('changes').where('created_at', '<', before).execute();
  }
}
