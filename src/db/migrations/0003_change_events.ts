import type { Kysely } from 'kysely';

/**
 * What each change means to the platform's services (an event of GET /api/events), recorded with
 * the change. Null on older rows, and on changes no service hears of (service credentials).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('changes').addColumn('event', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('changes').dropColumn('event').execute();
}
