import type { Kysely } from 'kysely';

/** Credentials of the platform's services (`rzs_`): only a digest of each value is kept. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('service_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('service_credentials').execute();
}
