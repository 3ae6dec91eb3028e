import { type Kysely, sql } from 'kysely';

/**
 * CLI login by device authorization (RFC 8628, docs/device-flow.md).
 *
 * `oauth_clients`: the operator's registered public clients (the built-in `rz-cli` is not stored).
 * `device_requests`: one row per device authorization; the device code is kept only as its
 * SHA-256, the user code in clear (it is short-lived, typed by a person, and useless without the
 * approver's session), unique among pending requests by a partial index.
 * `tokens.origin`, `client_id`, `device_name`: where an API token came from, shown by its detail.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // JSON arrays of scope names: the ceiling, and what an empty `scope` asks for.
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('default_scopes', 'text', (c) => c.notNull())
    .addColumn('max_days', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('disabled_at', 'text')
    .execute();

  await db.schema
    .createTable('device_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('device_code_digest', 'text', (c) => c.notNull().unique())
    .addColumn('user_code', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('device_name', 'text')
    .addColumn('request_ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('interval_s', 'integer', (c) => c.notNull())
    .addColumn('last_poll_at', 'text')
    .addColumn('lookups', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('approver_id', 'text')
    // What the approver chose: the token's scopes, lifetime and name.
    .addColumn('approved_scopes', 'text')
    .addColumn('approved_days', 'integer')
    .addColumn('approved_name', 'text')
    .addColumn('token_id', 'text')
    .execute();
  await db.schema.createIndex('device_requests_pending_code').unique().on('device_requests').column('user_code').where(sql.ref('state'), '=', 'pending').execute();
  // The per-address pending cap, and the prune sweep by expiry.
  await db.schema.createIndex('device_requests_address').on('device_requests').columns(['request_ip', 'state']).execute();
  await db.schema.createIndex('device_requests_expiry').on('device_requests').column('expires_at').execute();

  await db.schema.alterTable('tokens').addColumn('origin', 'text', (c) => c.notNull().defaultTo('api')).execute();
  for (const column of ['client_id', 'device_name']) await db.schema.alterTable('tokens').addColumn(column, 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['device_name', 'client_id', 'origin']) await db.schema.alterTable('tokens').dropColumn(column).execute();
  await db.schema.dropTable('device_requests').execute();
  await db.schema.dropTable('oauth_clients').execute();
}
