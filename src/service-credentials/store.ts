import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { changeTransaction, recordChange } from '../changes/store.js';
import type { ServiceCredentialsTable, Tables } from '../db/tables.js';

/** A platform service's credential as stored: never its value, only its digest and hint. */
export interface ServiceCredential {
  readonly id: string;
  readonly name: string;
  readonly hint: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

const toCredential = (row: Omit<ServiceCredentialsTable, 'digest'>): ServiceCredential => ({
  id: row.id,
  name: row.name,
  hint: row.hint,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

const COLUMNS = ['id', 'name', 'hint', 'created_at', 'revoked_at'] as const;

/** SQL for service credentials. */
export class ServiceCredentialStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Inserts a credential, with the audit event of its creation when there is one. */
  async insert(credential: Omit<ServiceCredential, 'revokedAt'> & { readonly digest: string }, event?: AuditEvent): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('service_credentials')
        .values({ id: credential.id, name: credential.name, digest: credential.digest, hint: credential.hint, created_at: credential.createdAt })
        .execute();
      if (event) await recordAudit(trx, event);
    });
  }

  async findByDigest(digest: string): Promise<ServiceCredential | undefined> {
    const row = await this.db.selectFrom('service_credentials').select(COLUMNS).where('digest', '=', digest).executeTakeFirst();
    return row && toCredential(row);
  }

  /** The credentials among `digests`, in one query (a leak report's strings). */
  async findByDigests(digests: readonly string[]): Promise<ServiceCredential[]> {
    if (digests.length === 0) return [];
    const rows = await this.db.selectFrom('service_credentials').select(COLUMNS).where('digest', 'in', digests).execute();
    return rows.map(toCredential);
  }

  /** Credentials not revoked, oldest first. */
  async listActive(): Promise<ServiceCredential[]> {
    const rows = await this.db.selectFrom('service_credentials').select(COLUMNS).where('revoked_at', 'is', null).orderBy('created_at').orderBy('id').execute();
    return rows.map(toCredential);
  }

  /** Revokes an active credential and records the change; false when there is none with this id. */
  async revoke(id: string, at: string, event?: AuditEvent): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const result = await trx.updateTable('service_credentials').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      // Not an event of the stream: the services' own credentials are none of the other services' business.
      await recordChange(trx, 'service', id, at, null);
      if (event) await recordAudit(trx, event);
      return true;
    });
  }
}
