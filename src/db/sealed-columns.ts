import { type Kysely, sql } from 'kysely';
import type { Sealer } from '../lib/sealed.js';
import type { Tables } from './tables.js';

/** A column that holds a secret, sealed under KEY_ENCRYPTION_KEY when one is set (src/lib/sealed.ts). */
export interface SealedColumn {
  readonly table: keyof Tables;
  readonly key: string;
  readonly column: string;
  /** What a row is, in an error message. */
  readonly what: string;
}

export const SIGNING_KEY_SECRET: SealedColumn = { table: 'signing_keys', key: 'kid', column: 'private_jwk', what: 'signing key' };
export const WEBHOOK_SECRET: SealedColumn = { table: 'webhook_endpoints', key: 'id', column: 'secret', what: 'webhook endpoint' };

/** Every column that keeps a secret. A new one is added here, and its store seals and opens with these helpers. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [SIGNING_KEY_SECRET, WEBHOOK_SECRET];

/** The GCM additional data of a row's secret: the value opens in this row and column only. */
const contextOf = (column: SealedColumn, id: string): string => `${column.table}.${column.column}:${id}`;

export const sealIn = (sealer: Sealer, column: SealedColumn, id: string, secret: string): string => sealer.seal(secret, contextOf(column, id));

export const openIn = (sealer: Sealer, column: SealedColumn, id: string, stored: string): string =>
  sealer.open(stored, contextOf(column, id), `${column.what} ${id} (${column.table}.${column.column})`);

/**
 * Opens every stored secret, and seals again those that are plain (a key was just set) or sealed
 * under KEY_ENCRYPTION_KEY_OLD. Run at start-up: a secret no configured key opens refuses the start
 * (UnsealError) rather than failing later on a request. Each update names the value it replaces, so
 * two instances starting at once do not write over each other. Returns how many were sealed again.
 */
export async function resealAll(db: Kysely<Tables>, sealer: Sealer): Promise<number> {
  let resealed = 0;
  for (const column of SEALED_COLUMNS) {
    const { rows } = await sql<{ id: string; value: string }>`select ${sql.ref(column.key)} as id, ${sql.ref(column.column)} as value from ${sql.table(column.table)}`.execute(db);
    for (const { id, value } of rows) {
      const secret = openIn(sealer, column, id, value);
      if (!sealer.stale(value)) continue;
      await sql`update ${sql.table(column.table)} set ${sql.ref(column.column)} = ${sealIn(sealer, column, id, secret)} where ${sql.ref(column.key)} = ${id} and ${sql.ref(column.column)} = ${value}`.execute(db);
      resealed++;
    }
  }
  return resealed;
}
