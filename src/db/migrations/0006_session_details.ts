import type { Kysely } from 'kysely';

/**
 * What a person needs to recognise their own sessions: where each was opened (client address and
 * user agent, as the service saw them at login) and when it was last used.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['client_address', 'user_agent', 'last_used_at']) {
    await db.schema.alterTable('sessions').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['last_used_at', 'user_agent', 'client_address']) {
    await db.schema.alterTable('sessions').dropColumn(column).execute();
  }
}
