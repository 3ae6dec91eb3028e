import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import type { Tables } from './tables.js';
import * as m0001 from './migrations/0001_initial.js';
import * as m0002 from './migrations/0002_retention_indexes.js';
import * as m0003 from './migrations/0003_change_events.js';
import * as m0004 from './migrations/0004_service_credentials.js';
import * as m0005 from './migrations/0005_token_lifecycle.js';
import * as m0006 from './migrations/0006_session_details.js';
import * as m0007 from './migrations/0007_audit_events.js';
import * as m0008 from './migrations/0008_webhooks.js';
import * as m0009 from './migrations/0009_nfc_emails.js';
import * as m0010 from './migrations/0010_client_addresses.js';
import * as m0011 from './migrations/0011_webhook_leases.js';
import * as m0012 from './migrations/0012_webhook_breaker.js';
import * as m0013 from './migrations/0013_change_commit_times.js';
import * as m0014 from './migrations/0014_mail_outbox.js';
import * as m0015 from './migrations/0015_email_links.js';
import * as m0016 from './migrations/0016_second_factors.js';
import * as m0017 from './migrations/0017_session_authentication.js';
import * as m0018 from './migrations/0018_device_flow.js';
import * as m0019 from './migrations/0019_derived_tokens.js';

/** Migrations are imported statically so the build output needs no directory scanning. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_retention_indexes': m0002,
  '0003_change_events': m0003,
  '0004_service_credentials': m0004,
  '0005_token_lifecycle': m0005,
  '0006_session_details': m0006,
  '0007_audit_events': m0007,
  '0008_webhooks': m0008,
  '0009_nfc_emails': m0009,
  '0010_client_addresses': m0010,
  '0011_webhook_leases': m0011,
  '0012_webhook_breaker': m0012,
  '0013_change_commit_times': m0013,
  '0014_mail_outbox': m0014,
  '0015_email_links': m0015,
  '0016_second_factors': m0016,
  '0017_session_authentication': m0017,
  '0018_device_flow': m0018,
  '0019_derived_tokens': m0019,
};

/**
 * Brings the schema up to date. Safe to run from several instances at once: Kysely's migrator
 * holds a lock table while it works.
 */
export async function migrateToLatest(db: Kysely<Tables>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
