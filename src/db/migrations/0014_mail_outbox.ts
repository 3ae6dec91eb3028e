import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * The mail outbox (docs/email.md): a mail is written here in the transaction of the change that
 * causes it, and the delivery worker sends it. `seq` is the outbox order, in which a user's mails
 * go out. No link token is stored: the worker mints it as it sends. A user's mails go with the
 * user (they hold the address). The lease columns work as the webhook deliveries' do: one worker
 * at a time holds a mail, and only the holder of the lease token records the attempt.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('mail_outbox')
    .addColumn('seq', pg ? 'bigint' : 'integer', (c) => (pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
    // The Message-ID's local part: the same on every attempt, so receivers can drop a repeat.
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('link_purpose', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  // The worker's probe and claim: pending mails by when they are due.
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').column('next_attempt_at').where(sql.ref('status'), '=', 'pending').execute();
  // "Is an earlier mail of this user still pending?", asked for each candidate, and supersedeMails.
  await db.schema.createIndex('mail_outbox_user_pending').on('mail_outbox').columns(['user_id', 'seq']).where(sql.ref('status'), '=', 'pending').execute();
  // `rz-auth mail list --status`, newest first.
  await db.schema.createIndex('mail_outbox_status').on('mail_outbox').columns(['status', 'seq']).execute();
  // The pruning sweep deletes finished mails by age.
  await db.schema.createIndex('mail_outbox_finished').on('mail_outbox').column('finished_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
