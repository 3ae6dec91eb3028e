import type { Kysely, Selectable } from 'kysely';
import type { MfaFactorsTable } from '../../db/mfa-tables.js';
import type { Tables } from '../../db/tables.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { fewerThan, lockOwner } from '../../db/pages.js';
import type { FactorWrites } from './factor-store.js';

/** A registered WebAuthn credential (contract §12.3). The public key never leaves the service. */
export interface WebAuthnCredential {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  /** base64url, as the authenticator gave it. */
  readonly credentialId: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  readonly signCount: number;
  readonly transports: readonly string[];
  /** BE: the credential may be synced to other devices (a "synced passkey"). */
  readonly backupEligible: boolean;
  /** BS: it is backed up now. */
  readonly backupState: boolean;
  /** Discoverable (credProps rk); null when the client did not say. */
  readonly discoverable: boolean | null;
  readonly userVerified: boolean;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly cloneSuspectedAt: string | null;
}

export type NewWebAuthnCredential = Omit<WebAuthnCredential, 'lastUsedAt' | 'cloneSuspectedAt'>;

export type InsertOutcome = 'inserted' | 'duplicate' | 'cap' | 'gone';

/** What an assertion changes: the new counter and backup state. */
export interface AssertionUse {
  readonly signCount: number;
  readonly backupState: boolean;
  readonly at: string;
}

/** SQL for WebAuthn credentials (contract §12.3, §12.6). */
export interface WebAuthnStore {
  /**
   * Registers a credential: 'duplicate' when its credential id is registered already (to anyone),
   * 'cap' when the user has `max` credentials, 'gone' when the user is; `also` runs in the same transaction.
   */
  insert(credential: NewWebAuthnCredential, max: number, also?: FactorWrites): Promise<InsertOutcome>;
  findByCredentialId(credentialId: string): Promise<WebAuthnCredential | undefined>;
  /** The user's credentials, oldest first (allowCredentials, excludeCredentials). */
  listForUser(userId: string): Promise<WebAuthnCredential[]>;
  /**
   * Records a verified assertion in one compare-and-set statement against the stored counter:
   * accepted when the new counter is greater, or both are zero (synced passkeys do not count).
   * Otherwise the factor is flagged as a suspected clone and 'clone_suspected' returned
   * (WebAuthn §6.1.1; contract §12.6).
   */
  recordAssertion(id: string, use: AssertionUse): Promise<'accepted' | 'clone_suspected' | 'gone'>;
}

const flag = (value: boolean): number => (value ? 1 : 0);

const toCredential = (row: Selectable<MfaFactorsTable>): WebAuthnCredential => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  credentialId: row.credential_id ?? '',
  publicKey: row.public_key ?? '',
  // PostgreSQL's bigint arrives as a string.
  signCount: Number(row.sign_count ?? 0),
  transports: row.transports === null ? [] : (JSON.parse(row.transports) as string[]),
  backupEligible: row.backup_eligible === 1,
  backupState: row.backup_state === 1,
  discoverable: row.discoverable === null ? null : row.discoverable === 1,
  userVerified: row.user_verified === 1,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  cloneSuspectedAt: row.clone_suspected_at,
});

export class SqlWebAuthnStore implements WebAuthnStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async insert(c: NewWebAuthnCredential, max: number, also?: FactorWrites): Promise<InsertOutcome> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        // The user's row lock serialises additions, so the cap holds under parallel registrations.
        if (!(await lockOwner(trx, 'users', c.userId))) return 'gone';
        const owned = trx.selectFrom('mfa_factors').select('id').where('user_id', '=', c.userId).where('type', '=', 'webauthn');
        if (!(await fewerThan(owned, max))) return 'cap';
        await trx
          .insertInto('mfa_factors')
          .values({
            id: c.id,
            user_id: c.userId,
            type: 'webauthn',
            status: 'active',
            name: c.name,
            created_at: c.createdAt,
            credential_id: c.credentialId,
            public_key: c.publicKey,
            sign_count: c.signCount,
            transports: JSON.stringify(c.transports),
            backup_eligible: flag(c.backupEligible),
            backup_state: flag(c.backupState),
            discoverable: c.discoverable === null ? null : flag(c.discoverable),
            user_verified: flag(c.userVerified),
          })
          .execute();
        await also?.(trx);
        return 'inserted' as const;
      });
    } catch (error) {
      // The unique credential id: registered already, by this user or another.
      if (isUniqueViolation(error)) return 'duplicate';
      throw error;
    }
  }

  async findByCredentialId(credentialId: string): Promise<WebAuthnCredential | undefined> {
    const row = await this.db.selectFrom('mfa_factors').selectAll().where('credential_id', '=', credentialId).where('type', '=', 'webauthn').executeTakeFirst();
    return row && toCredential(row);
  }

  async listForUser(userId: string): Promise<WebAuthnCredential[]> {
    const rows = await this.db.selectFrom('mfa_factors').selectAll().where('user_id', '=', userId).where('type', '=', 'webauthn').orderBy('created_at').orderBy('id').execute();
    return rows.map(toCredential);
  }

  async recordAssertion(id: string, use: AssertionUse): Promise<'accepted' | 'clone_suspected' | 'gone'> {
    // The comparison is with the stored counter at the moment of the write, not with one read
    // earlier: of two assertions carrying the same counter, the second is the suspect one.
    const accepted = await this.db
      .updateTable('mfa_factors')
      .set({ sign_count: use.signCount, backup_state: flag(use.backupState), last_used_at: use.at })
      .where('id', '=', id)
      .where('type', '=', 'webauthn')
      // New counter 0 is accepted only over a stored 0; any other only over a smaller stored one.
      .where('sign_count', use.signCount === 0 ? '=' : '<', use.signCount)
      .executeTakeFirst();
    if (accepted.numUpdatedRows > 0n) return 'accepted';
    const flagged = await this.db
      .updateTable('mfa_factors')
      .set((eb) => ({ clone_suspected_at: eb.fn.coalesce('clone_suspected_at', eb.val(use.at)) }))
      .where('id', '=', id)
      .where('type', '=', 'webauthn')
      .executeTakeFirst();
    return flagged.numUpdatedRows > 0n ? 'clone_suspected' : 'gone';
  }
}
