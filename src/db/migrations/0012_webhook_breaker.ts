import type { Kysely } from 'kysely';

/**
 * The circuit breaker of each endpoint (docs/webhooks.md): its failed attempts in a row, and until
 * when its deliveries are paused. Kept in the endpoint's row, so every instance sees one state.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('paused_until', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('paused_until').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('consecutive_failures').execute();
}
