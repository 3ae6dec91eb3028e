import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Second factors (contract §12, docs/mfa.md). One table holds both kinds of factor, so a user's
 * list, last use and removal are one query; the columns of the other kind stay null.
 *
 * - A TOTP factor keeps its secret sealed under MFA_ENCRYPTION_KEY and the last time step it
 *   accepted, which only grows (RFC 6238 §5.2: a code is accepted once).
 * - A WebAuthn factor keeps its credential id (unique across every user: one authenticator
 *   credential is one factor), its COSE public key, signature counter, transports and the
 *   backup flags (BE, BS) of WebAuthn §6.1.
 * - At most one pending (unconfirmed) TOTP factor per user, by a partial unique index that a new
 *   enrolment takes over.
 *
 * Recovery codes are stored as SHA-256 digests, one row each: using one deletes it. A WebAuthn
 * challenge is a row taken (deleted) on first use. A pending two-step login keeps its `mfa_token`
 * as a digest with the failed attempts it has reserved. `mfa_users` holds per-user state: the
 * random WebAuthn user handle and when MFA_REQUIRED first applied. `mfa_lockouts` counts each
 * user's second-factor attempts in a window, across every instance and client address.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const counter = isPostgres(db) ? 'bigint' : 'integer';
  await db.schema
    .createTable('mfa_factors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('pending_until', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('totp_secret', 'text')
    .addColumn('totp_last_step', counter)
    .addColumn('credential_id', 'text', (c) => c.unique())
    .addColumn('public_key', 'text')
    .addColumn('sign_count', counter)
    .addColumn('transports', 'text')
    .addColumn('backup_eligible', 'integer')
    .addColumn('backup_state', 'integer')
    .addColumn('discoverable', 'integer')
    .addColumn('user_verified', 'integer')
    .addColumn('clone_suspected_at', 'text')
    .execute();
  await db.schema.createIndex('mfa_factors_user').on('mfa_factors').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('mfa_factors_one_pending').on('mfa_factors').column('user_id').unique().where(sql.ref('status'), '=', 'pending').execute();

  await db.schema
    .createTable('mfa_recovery_codes')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mfa_recovery_codes_pk', ['user_id', 'digest'])
    .execute();

  await db.schema
    .createTable('mfa_users')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('webauthn_handle', 'text', (c) => c.unique())
    .addColumn('required_since', 'text')
    .execute();

  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    // Null for passkey login, where the user is not known until the assertion names them.
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires_at').execute();

  await db.schema
    .createTable('mfa_pending_logins')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_pending_logins_expiry').on('mfa_pending_logins').column('expires_at').execute();

  await db.schema
    .createTable('mfa_lockouts')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('window_start', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mfa_lockouts').execute();
  await db.schema.dropTable('mfa_pending_logins').execute();
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('mfa_users').execute();
  await db.schema.dropTable('mfa_recovery_codes').execute();
  await db.schema.dropTable('mfa_factors').execute();
}
