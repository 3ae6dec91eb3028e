import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Accounts by email (docs/email.md). `users.email_verified_at`: when a link mailed to the current
 * address was used (null: not proven). `link_tokens`: the SHA-256 digests of the tokens in
 * verification, reset and email-change links, minted by the mail worker as it sends (never the
 * token itself), each bound to its user, purpose, mail and address. `email_change_requests`: the
 * session that asked for an email change, which the confirmation leaves signed in.
 * `password_reset_requests`: reset requests as received, one insert whether or not an account has
 * the email; a background step looks the email up and queues the mail.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema.alterTable('users').addColumn('email_verified_at', 'text').execute();
  await db.schema
    .createTable('link_tokens')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('mail_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  // Consuming one link kills every other of its user and purpose; so does asking for a new one.
  await db.schema.createIndex('link_tokens_user').on('link_tokens').columns(['user_id', 'purpose']).execute();
  await db.schema.createIndex('link_tokens_expiry').on('link_tokens').column('expires_at').execute();
  await db.schema
    .createTable('email_change_requests')
    .addColumn('mail_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_change_requests_user').on('email_change_requests').column('user_id').execute();
  await db.schema
    .createTable('password_reset_requests')
    .addColumn('seq', pg ? 'bigint' : 'integer', (c) => (pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('password_reset_requests').execute();
  await db.schema.dropTable('email_change_requests').execute();
  await db.schema.dropTable('link_tokens').execute();
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
}
