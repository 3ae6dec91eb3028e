import { type Kysely, sql } from 'kysely';

/**
 * The delivery claim counts the leases each candidate's endpoint already holds (at most two
 * attempts per endpoint in flight): this index makes that count a short range read however many
 * deliveries the endpoint has waiting.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_leased').on('webhook_deliveries').columns(['endpoint_id', 'lease_until']).where(sql.ref('status'), '=', 'pending').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_leased').execute();
}
