import type { Kysely } from 'kysely';

/** Indexes for the maintenance sweeps, which delete by age: without them each sweep reads every row. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('changes_created_at').on('changes').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('changes_created_at').execute();
  await db.schema.dropIndex('sessions_expires_at').execute();
}
