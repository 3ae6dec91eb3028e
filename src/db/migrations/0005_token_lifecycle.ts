import type { Kysely } from 'kysely';

/**
 * The token lifecycle: a network allow-list per token, the address of its last use, the token that
 * replaced it (rotation), and the scopes it has exercised, one row per token and scope so that
 * instances flushing at once add to the set instead of overwriting each other.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('allowed_cidrs', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('last_used_ip', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('replaced_by', 'text').execute();
  await db.schema
    .createTable('token_scope_uses')
    .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('token_scope_uses_pk', ['token_id', 'scope'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('token_scope_uses').execute();
  for (const column of ['replaced_by', 'last_used_ip', 'allowed_cidrs']) await db.schema.alterTable('tokens').dropColumn(column).execute();
}
