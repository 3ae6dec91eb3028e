import { type Kysely, sql, type Transaction } from 'kysely';
import { isDeadlock, isPostgres } from '../db/dialect.js';
import type { ChangesTable, Tables } from '../db/tables.js';
import { type ChangeEvent, parseEvent } from './events.js';

export type ChangeKind = ChangesTable['kind'];

/** One entry of the change log. Ids only grow: they order the log and are its readers' cursors. */
export interface Change {
  readonly id: number;
  readonly kind: ChangeKind;
  readonly ref: string;
  /** What the change means to the platform's services; null when it means nothing to them. */
  readonly event: ChangeEvent | null;
  /**
   * When the change was written, in milliseconds since the epoch (absent on entries recorded by an
   * older version): what a revocation's propagation is measured from (docs/revocation-metrics.md).
   */
  readonly committedAt?: number;
}

/** Any number fixed for the life of the schema: the advisory lock that orders change transactions. */
const CHANGE_LOCK = 7_277_001;

declare const changeLockHeld: unique symbol;

/** A transaction begun by {@link changeTransaction}: the only kind a change can be recorded in. */
export type ChangeTransaction = Transaction<Tables> & { readonly [changeLockHeld]: true };

/**
 * Appends a change inside the caller's transaction, so the change and its record commit together.
 *
 * Readers fetch `id > last id seen`, which is only safe if ids become visible in order. SQLite has
 * one writer at a time; on PostgreSQL two transactions could commit out of id order, so change
 * transactions hold a transaction-scoped advisory lock ({@link changeTransaction} takes it) when
 * they allocate the id.
 */
export async function recordChange(trx: ChangeTransaction, kind: ChangeKind, ref: string, at: string, event: ChangeEvent | null): Promise<void> {
  // The wall clock, not the service's Clock (`at`): what is measured from it is real time elapsed
  // until other processes apply the change, on their own wall clocks.
  const committedAt = Date.now();
  await trx
    .insertInto('changes')
    .values({ kind, ref, created_at: at, event: event && JSON.stringify(event), committed_at: committedAt })
    .execute();
}

/** Runs of a change transaction that PostgreSQL aborted to break a deadlock, in all. */
const CHANGE_ATTEMPTS = 3;

/**
 * Runs `work` in a transaction that records changes. On PostgreSQL the change log's lock is taken
 * first, before any row lock: taken later (when the change is recorded), a transaction holding a
 * token's row waits for the lock while the lock's holder waits for that row (a revocation racing
 * a rotation, an app's deletion racing the rotation of its token), and PostgreSQL aborts one as
 * a deadlock. Every change transaction takes the lock at its start, so they queue instead.
 *
 * A transaction that records no change does not queue (the usage flush, which locks several
 * tokens' rows), so a deadlock with one remains possible: the change transaction it aborted has
 * changed nothing and is run again, `work` included.
 */
export async function changeTransaction<T>(db: Kysely<Tables>, work: (trx: ChangeTransaction) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(${CHANGE_LOCK})`.execute(trx);
        return work(trx as ChangeTransaction);
      });
    } catch (error) {
      if (attempt === CHANGE_ATTEMPTS || !isDeadlock(error)) throw error;
    }
  }
}

/** Reads and prunes the change log. */
export class ChangeStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Up to `limit` changes with an id above `afterId`, oldest first. */
  async listAfter(afterId: number, limit = 1000): Promise<Change[]> {
    const rows = await this.db
      .selectFrom('changes')
      .select(['id', 'kind', 'ref', 'event', 'committed_at'])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    // PostgreSQL returns bigint as a string.
    return rows.map((r) => ({
      id: Number(r.id),
      kind: r.kind,
      ref: r.ref,
      event: parseEvent(r.event),
      ...(r.committed_at === null ? {} : { committedAt: Number(r.committed_at) }),
    }));
  }

  /** The newest change id, or 0. */
  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('changes')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /**
   * The oldest and newest ids still in the log (0 when it is empty). A reader whose cursor is below
   * `oldest - 1` may have missed pruned entries; one above `latest` is reading another log.
   */
  async bounds(): Promise<{ oldest: number; latest: number }> {
    // Two subqueries, not min and max in one: each is then a single index probe on SQLite too.
    const row = await this.db
      .selectNoFrom((eb) => [
        eb.selectFrom('changes').select((s) => s.fn.min('id').as('id')).as('oldest'),
        eb.selectFrom('changes').select((s) => s.fn.max('id').as('id')).as('latest'),
      ])
      .executeTakeFirst();
    return { oldest: Number(row?.oldest ?? 0), latest: Number(row?.latest ?? 0) };
  }

  /**
   * Deletes the entries recorded before `before`, as a prefix of the log (every id below the first
   * one kept), and never the newest entry: the oldest id left then tells a reader exactly whether it
   * missed something, and ids are never handed out again. Returns how many were deleted.
   */
  async prune(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom('changes')
      .where('id', '<', (eb) =>
        eb.fn.coalesce(
          eb.selectFrom('changes').select((s) => s.fn.min('id').as('id')).where('created_at', '>=', before),
          eb.selectFrom('changes').select((s) => s.fn.max('id').as('id')),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
