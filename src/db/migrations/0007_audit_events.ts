import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * The audit log. `seq` orders it (cursor pagination, newest first); `user_id` is whose log an event
 * belongs to (null for events of nobody's account, e.g. a failed login for an unknown email). No
 * foreign key to users: an account's events outlive it until retention removes them. No index on
 * `id` (a random UUID, unique by construction, never looked up): every event would pay for a write
 * at a random place in one more B-tree, in the transaction of the change it records.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('audit_events')
    .addColumn('seq', pg ? 'bigint' : 'integer', (c) => (pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('subject_type', 'text')
    .addColumn('subject_id', 'text')
    .addColumn('client_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  // A user's events newest first, by cursor: one index range scan per page.
  await db.schema.createIndex('audit_events_user_seq').on('audit_events').columns(['user_id', 'seq']).execute();
  // The retention sweep deletes by age.
  await db.schema.createIndex('audit_events_occurred_at').on('audit_events').column('occurred_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
