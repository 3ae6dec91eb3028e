import { isIP } from 'node:net';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

const PAGE = 500;

/** Where a client address is stored, and the column that orders the table's rows. */
const COLUMNS = [
  { table: 'sessions', key: 'id', column: 'client_address', first: '' },
  { table: 'tokens', key: 'id', column: 'last_used_ip', first: '' },
  { table: 'audit_events', key: 'seq', column: 'client_address', first: 0 },
] as const;

/**
 * Behind a proxy that passed on what its client wrote, a forwarded entry that was no address at all
 * was stored as the client's (fixed in http/client-address.ts), and one longer than the API's
 * 64 characters made the lists that show it fail. Such values are cleared. Only values longer than
 * an address can be, or with a character no address without a zone id has, are read (in pages,
 * by key) and checked one by one, so a large audit log costs one scan.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, key, column, first } of COLUMNS) {
    const suspect = isPostgres(db)
      ? sql<boolean>`(length(${sql.ref(column)}) > 45 or ${sql.ref(column)} ~ '[^0-9a-fA-F:.]')`
      : sql<boolean>`(length(${sql.ref(column)}) > 45 or ${sql.ref(column)} glob '*[^0-9a-fA-F:.]*')`;
    let after: string | number = first;
    for (;;) {
      const page = await suspects(db, table, key, column, suspect, after);
      for (const row of page) {
        if (!isAddress(row.address)) await sql`update ${sql.table(table)} set ${sql.ref(column)} = null where ${sql.ref(key)} = ${row.row_key}`.execute(db);
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last) break;
      after = last.row_key;
    }
  }
}

async function suspects(db: Kysely<unknown>, table: string, key: string, column: string, suspect: RawBuilder<boolean>, after: string | number) {
  const { rows } = await sql<{ row_key: string | number; address: string }>`
    select ${sql.ref(key)} as row_key, ${sql.ref(column)} as address from ${sql.table(table)}
    where ${sql.ref(column)} is not null and ${suspect} and ${sql.ref(key)} > ${after}
    order by ${sql.ref(key)} limit ${PAGE}`.execute(db);
  return rows;
}

/** What the socket may report: an IP address, a link-local one with its zone id. */
const isAddress = (value: string): boolean => value.length <= 64 && isIP(value) !== 0;

/** Nothing to undo: a cleared address was never one. */
export async function down(): Promise<void> {}
