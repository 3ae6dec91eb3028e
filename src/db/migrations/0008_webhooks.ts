import { type Kysely, sql } from 'kysely';

/**
 * Webhooks (docs/webhooks.md). The audit log is their outbox: `audit_events.dispatched` marks the events
 * the dispatcher has turned into deliveries, so recording an event costs nothing more than before
 * (the column has a default). Events recorded before this migration are marked dispatched: no
 * endpoint existed to want them. A partial index keeps the dispatcher's probe one index lookup
 * however long the log grows.
 *
 * `tokens.expiry_notice` ('7d', '1d' or null) is the last `token.expiring` notice a token got: the
 * sweep's conditional update of it decides which instance records the notice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_events').addColumn('dispatched', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update audit_events set dispatched = 1`.execute(db);
  await db.schema.createIndex('audit_events_undispatched').on('audit_events').column('seq').where(sql.ref('dispatched'), '=', 0).execute();
  await db.schema.alterTable('tokens').addColumn('expiry_notice', 'text').execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Null for the operator's endpoints (CLI), which receive everyone's events.
    .addColumn('owner_user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_owner').on('webhook_endpoints').columns(['owner_user_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    // The `webhook-id` header: the same on every attempt, so receivers can drop repeats.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text')
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The exact body sent, so every attempt carries the same bytes and the same signature input.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .execute();
  // The worker's claim: pending deliveries by when they are due.
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').column('next_attempt_at').where(sql.ref('status'), '=', 'pending').execute();
  // An endpoint's deliveries newest first, by cursor.
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at', 'id']).execute();
  // The pruning sweep deletes finished deliveries by age.
  await db.schema.createIndex('webhook_deliveries_finished').on('webhook_deliveries').column('finished_at').execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    // 1 for the first attempt: the delivery's attempt_count when it was recorded.
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
  await db.schema.alterTable('tokens').dropColumn('expiry_notice').execute();
  await db.schema.dropIndex('audit_events_undispatched').execute();
  await db.schema.alterTable('audit_events').dropColumn('dispatched').execute();
}
