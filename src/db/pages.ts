import { type SelectQueryBuilder, sql, type Transaction } from 'kysely';
import type { PageRequest } from '../lib/pages.js';
import type { Tables } from './tables.js';

/**
 * One page of `query` over `table`, newest first by (created_at, id), after the request's position,
 * with one row more than the page (it tells that a next page exists); without a page, every row. A keyset, not an offset:
 * rows written or deleted between two pages cannot shift the rest, and the (user, created_at)
 * indexes serve it as a range.
 */
export function newestFirst<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, table: TB & string, page?: PageRequest): SelectQueryBuilder<DB, TB, O> {
  const createdAt = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);
  const after = page?.after;
  const from = after === undefined ? query : query.where(sql<boolean>`(${createdAt}, ${id}) < (${after.createdAt}, ${after.id})`);
  const ordered = from.orderBy(createdAt, 'desc').orderBy(id, 'desc');
  return page === undefined ? ordered : ordered.limit(page.limit + 1);
}

/**
 * Serialises the creations counted against one owner's cap: a write that changes nothing on the
 * owner's row takes PostgreSQL's row lock and SQLite's write lock, held to the end of `trx`, so
 * two creations at once cannot both count one below the cap. False when the row is gone.
 */
export async function lockOwner(trx: Transaction<Tables>, table: 'users' | 'apps' | 'webhook_endpoints', id: string): Promise<boolean> {
  const result = await sql`update ${sql.table(table)} set created_at = created_at where id = ${id}`.execute(trx);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Whether `owned` (what counts against a cap, read after {@link lockOwner}) has fewer than `max` rows; reads at most `max`. */
export async function fewerThan<DB, TB extends keyof DB, O>(owned: SelectQueryBuilder<DB, TB, O>, max: number): Promise<boolean> {
  const rows = await owned.clearSelect().select(sql<number>`1`.as('one')).limit(max).execute();
  return rows.length < max;
}
