import type { Kysely } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { changeTransaction, recordChange } from '../changes/store.js';
import { openIn, sealIn, SIGNING_KEY_SECRET } from '../db/sealed-columns.js';
import type { Tables } from '../db/tables.js';
import { NO_SEALING_KEYS, Sealer } from '../lib/sealed.js';

/** A JWT signing key pair as stored (JWK JSON). */
export interface StoredKey {
  readonly kid: string;
  readonly alg: string;
  readonly publicJwk: string;
  readonly privateJwk: string;
  readonly createdAt: string;
  readonly retiredAt: string | null;
}

/** SQL for signing keys. The private key is sealed at rest when the operator set KEY_ENCRYPTION_KEY. */
export class KeyStore {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly sealer = new Sealer(NO_SEALING_KEYS),
  ) {}

  async list(): Promise<StoredKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
    return rows.map((r) => ({
      kid: r.kid,
      alg: r.alg,
      publicJwk: r.public_jwk,
      privateJwk: openIn(this.sealer, SIGNING_KEY_SECRET, r.kid, r.private_jwk),
      createdAt: r.created_at,
      retiredAt: r.retired_at,
    }));
  }

  /**
   * Adds a key that takes over signing. Every older active key is retired (it keeps verifying the
   * tokens it signed); with `dropBefore`, keys retired before that time are deleted.
   */
  async rotate(key: StoredKey, options: { dropBefore?: string; dropAllOthers?: boolean; event?: AuditEvent } = {}): Promise<void> {
    await changeTransaction(this.db, async (trx) => {
      await trx.updateTable('signing_keys').set({ retired_at: key.createdAt }).where('retired_at', 'is', null).execute();
      if (options.dropAllOthers) await trx.deleteFrom('signing_keys').execute();
      else if (options.dropBefore) await trx.deleteFrom('signing_keys').where('retired_at', '<', options.dropBefore).execute();
      await trx
        .insertInto('signing_keys')
        .values({
          kid: key.kid,
          alg: key.alg,
          public_jwk: key.publicJwk,
          private_jwk: sealIn(this.sealer, SIGNING_KEY_SECRET, key.kid, key.privateJwk),
          created_at: key.createdAt,
          retired_at: null,
        })
        .execute();
      await recordChange(trx, 'keys', key.kid, key.createdAt, { type: 'keys.changed', data: {} });
      if (options.event) await recordAudit(trx, options.event);
    });
  }
}
