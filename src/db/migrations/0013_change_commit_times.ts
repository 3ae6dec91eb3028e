import type { Kysely } from 'kysely';

/**
 * When each change was committed, in milliseconds since the epoch (docs/revocation-metrics.md):
 * every instance and every service measures a revocation's propagation from it. Null on older rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('changes').addColumn('committed_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('changes').dropColumn('committed_at').execute();
}
