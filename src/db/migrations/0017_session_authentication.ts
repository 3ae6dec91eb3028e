import type { Kysely } from 'kysely';

/**
 * How each session's user authenticated (contract §12.4): the RFC 8176 `amr` of its newest token,
 * space-separated, and `auth_time`, so the list of sessions can show which were opened with a
 * second factor. Null for sessions older than the columns: they were opened with a password.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['amr', 'auth_time']) {
    await db.schema.alterTable('sessions').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['auth_time', 'amr']) {
    await db.schema.alterTable('sessions').dropColumn(column).execute();
  }
}
