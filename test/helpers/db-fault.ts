import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../../src/db/dialect.js';
import type { Tables } from '../../src/db/tables.js';

/**
 * Makes the database refuse every audit event of `type` until the returned function is called: a
 * failure in the middle of a change, to show that the change and its record commit together or
 * not at all. A trigger, so the code under test runs unchanged, on SQLite and PostgreSQL alike.
 */
export async function refuseAuditEvents(db: Kysely<Tables>, type: string): Promise<() => Promise<void>> {
  const literal = sql.lit(type);
  if (isPostgres(db)) {
    await sql`CREATE OR REPLACE FUNCTION refuse_audit_event() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit event refused by the test'; END $$ LANGUAGE plpgsql`.execute(db);
    await sql`CREATE TRIGGER refuse_audit_event BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.type = ${literal}) EXECUTE FUNCTION refuse_audit_event()`.execute(db);
    return async () => {
      await sql`DROP TRIGGER refuse_audit_event ON audit_events`.execute(db);
    };
  }
  await sql`CREATE TRIGGER refuse_audit_event BEFORE INSERT ON audit_events WHEN NEW.type = ${literal} BEGIN SELECT RAISE(ABORT, 'audit event refused by the test'); END`.execute(db);
  return async () => {
    await sql`DROP TRIGGER refuse_audit_event`.execute(db);
  };
}
