import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { insertBatches, isPostgres } from './dialect.js';
import type { Tables } from './tables.js';

/*
 * Copying a whole deployment from one database to another (`rz-auth copy`, docs/deployment.md):
 * every table, in an order that inserts each row after the rows it refers to. Values are copied as
 * stored, so sealed secrets stay sealed under the same KEY_ENCRYPTION_KEY.
 */

type Row = Record<string, unknown>;

/** Every table with the columns that order its rows (its primary key), parents before children. */
export const COPY_ORDER: ReadonlyArray<readonly [keyof Tables, readonly string[]]> = [
  ['users', ['id']],
  ['sessions', ['id']],
  ['apps', ['id']],
  ['tokens', ['id']],
  ['token_scope_uses', ['token_id', 'scope']],
  ['signing_keys', ['kid']],
  ['service_credentials', ['id']],
  ['changes', ['id']],
  ['audit_events', ['seq']],
  ['webhook_endpoints', ['id']],
  ['webhook_deliveries', ['id']],
  ['webhook_attempts', ['delivery_id', 'attempt']],
  ['mfa_factors', ['id']],
  ['mfa_recovery_codes', ['user_id', 'digest']],
  ['mfa_users', ['user_id']],
  ['webauthn_challenges', ['id']],
  ['mfa_pending_logins', ['digest']],
  ['mfa_lockouts', ['user_id']],
  ['mail_outbox', ['seq']],
  ['link_tokens', ['digest']],
  ['email_change_requests', ['mail_id']],
  ['password_reset_requests', ['seq']],
  ['oauth_clients', ['id']],
  ['device_requests', ['id']],
  ['derived_revocations', ['token_id', 'child_id']],
  ['derived_seen', ['digest']],
];

/** Columns PostgreSQL generates (GENERATED ALWAYS AS IDENTITY): copied as they are, then the sequence moved past them. */
const IDENTITY: Partial<Record<keyof Tables, string>> = { changes: 'id', audit_events: 'seq', mail_outbox: 'seq', password_reset_requests: 'seq' };

const PAGE = 1000;

/** A table's row count and an order-independent digest of its rows. */
export interface TableSummary {
  readonly table: keyof Tables;
  readonly rows: number;
  readonly digest: string;
}

/** One row as the digest sees it: every value as text, so a number on one side and int8 text on the other agree. */
function rowDigest(row: Row): bigint {
  const canonical = Object.keys(row)
    .sort()
    .map((k) => {
      const v = row[k];
      return [k, v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('base64') : String(v)];
    });
  return BigInt(`0x${createHash('sha256').update(JSON.stringify(canonical)).digest('hex')}`);
}

/** A running sum of row digests modulo 2^256: the same for the same rows in any order. */
class TableDigest {
  rows = 0;
  private sum = 0n;
  add(rows: readonly Row[]): void {
    for (const row of rows) this.sum = (this.sum + rowDigest(row)) & ((1n << 256n) - 1n);
    this.rows += rows.length;
  }
  summary(table: keyof Tables): TableSummary {
    return { table, rows: this.rows, digest: this.sum.toString(16).padStart(64, '0') };
  }
}

/** A table's rows in pages, in key order: after the last key seen for a one-column key, by offset otherwise. */
async function* pages(db: Kysely<Tables>, table: keyof Tables, order: readonly string[]): AsyncGenerator<Row[]> {
  const orderBy = sql.join(order.map((c) => sql.ref(c)));
  const [first] = order;
  let after: unknown;
  for (let offset = 0; ; offset += PAGE) {
    const where = first !== undefined && order.length === 1 && after !== undefined ? sql`where ${sql.ref(first)} > ${after}` : sql``;
    const skip = order.length === 1 ? sql`` : sql`offset ${offset}`;
    const { rows } = await sql<Row>`select * from ${sql.table(table)} ${where} order by ${orderBy} limit ${PAGE} ${skip}`.execute(db);
    if (rows.length > 0) yield rows;
    if (rows.length < PAGE) return;
    if (first !== undefined) after = rows.at(-1)?.[first];
  }
}

/** Each table's count and digest, read from `db`. */
export async function summarise(db: Kysely<Tables>): Promise<TableSummary[]> {
  const summaries: TableSummary[] = [];
  for (const [table, order] of COPY_ORDER) {
    const digest = new TableDigest();
    for await (const rows of pages(db, table, order)) digest.add(rows);
    summaries.push(digest.summary(table));
  }
  return summaries;
}

/** The first table of `db` that holds rows, with how many; undefined when every table is empty. */
export async function firstNonEmpty(db: Kysely<Tables>): Promise<{ table: string; rows: number } | undefined> {
  for (const [table] of COPY_ORDER) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db);
    const n = Number(rows[0]?.n ?? 0);
    if (n > 0) return { table, rows: n };
  }
  return undefined;
}

async function insertRows(db: Kysely<Tables>, table: keyof Tables, rows: readonly Row[], overriding: boolean): Promise<void> {
  const columns = Object.keys(rows[0] ?? {});
  for (const part of insertBatches(rows)) {
    const values = sql.join(part.map((row) => sql`(${sql.join(columns.map((c) => row[c] ?? null))})`));
    const override = overriding ? sql`overriding system value` : sql``;
    await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) ${override} values ${values}`.execute(db);
  }
}

/** Moves PostgreSQL's identity sequence past the copied values, so the next row gets a new number. */
async function advanceIdentity(db: Kysely<Tables>, table: keyof Tables, column: string): Promise<void> {
  await sql`select setval(pg_get_serial_sequence(${table}, ${column}), max(${sql.ref(column)})) from ${sql.table(table)} having max(${sql.ref(column)}) is not null`.execute(db);
}

/**
 * Copies every row of `from` into `to` in one transaction on `to` (a failure leaves it as it was),
 * reading `from` in one snapshot so that rows refer to rows that are copied. Returns what was read.
 */
export async function copyTables(from: Kysely<Tables>, to: Kysely<Tables>, onTable: (summary: TableSummary) => void = () => {}): Promise<TableSummary[]> {
  const targetPg = isPostgres(to);
  return from.connection().execute(async (source) => {
    await sql.raw(isPostgres(from) ? 'begin transaction isolation level repeatable read read only' : 'begin').execute(source);
    try {
      const summaries = await to.transaction().execute(async (target) => {
        const done: TableSummary[] = [];
        for (const [table, order] of COPY_ORDER) {
          const identity = IDENTITY[table];
          const digest = new TableDigest();
          for await (const rows of pages(source, table, order)) {
            await insertRows(target, table, rows, targetPg && identity !== undefined);
            digest.add(rows);
          }
          if (targetPg && identity !== undefined) await advanceIdentity(target, table, identity);
          done.push(digest.summary(table));
          onTable(digest.summary(table));
        }
        return done;
      });
      return summaries;
    } finally {
      await sql.raw('commit').execute(source);
    }
  });
}
