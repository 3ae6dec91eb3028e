import type { Kysely } from 'kysely';

/**
 * Derived tokens (contract §14, docs/derived-tokens.md). A derivable API or app token keeps its
 * derivation key sealed under DERIVE_KEK (`derive_key`, the key id inside the sealed value), the
 * reference its children carry (`parent_ref`, 32 hex digits, unique so a child finds its parent in
 * one indexed read) and the time before which its children are dead (`children_revoked_before`).
 * `derived_revocations` holds revoked child ids until every child with that id has expired
 * (`keep_until`); `derived_seen` one row per distinct child token seen in use (by its digest).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('derivable', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  for (const column of ['derive_key', 'parent_ref', 'children_revoked_before']) {
    await db.schema.alterTable('tokens').addColumn(column, 'text').execute();
  }
  await db.schema.createIndex('tokens_parent_ref').unique().on('tokens').column('parent_ref').execute();
  await db.schema
    .createTable('derived_revocations')
    .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
    .addColumn('child_id', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text', (c) => c.notNull())
    .addColumn('keep_until', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('derived_revocations_pk', ['token_id', 'child_id'])
    .execute();
  await db.schema.createIndex('derived_revocations_keep_until').on('derived_revocations').column('keep_until').execute();
  await db.schema
    .createTable('derived_seen')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
    .addColumn('child_id', 'text', (c) => c.notNull())
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('caveats', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .addColumn('last_used_ip', 'text')
    .execute();
  await db.schema.createIndex('derived_seen_token').on('derived_seen').columns(['token_id', 'first_seen_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('derived_seen').execute();
  await db.schema.dropTable('derived_revocations').execute();
  await db.schema.dropIndex('tokens_parent_ref').execute();
  for (const column of ['children_revoked_before', 'parent_ref', 'derive_key', 'derivable']) {
    await db.schema.alterTable('tokens').dropColumn(column).execute();
  }
}
