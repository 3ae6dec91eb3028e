import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** SQL for per-user second-factor state (contract §12.3, §12.7). */
export interface MfaUserStore {
  /**
   * The user's WebAuthn user handle: the stored one, or `candidate` (32 random bytes, base64url)
   * stored now. One statement, so parallel first ceremonies agree on one handle.
   */
  userHandle(userId: string, candidate: string): Promise<string>;
  /** The user a handle belongs to (passkey login checks it against the credential's owner). */
  userByHandle(handle: string): Promise<string | undefined>;
  /** When MFA_REQUIRED first applied to the user: the stored time, or `at` stored now. */
  requiredSince(userId: string, at: string): Promise<string>;
}

export class SqlMfaUserStore implements MfaUserStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Stores `value` in `column` unless the user has one already; returns the one kept. One statement. */
  private async setOnce(userId: string, column: 'webauthn_handle' | 'required_since', value: string): Promise<string> {
    const row = await this.db
      .insertInto('mfa_users')
      .values({ user_id: userId, [column]: value })
      .onConflict((oc) => oc.column('user_id').doUpdateSet((eb) => ({ [column]: eb.fn.coalesce(`mfa_users.${column}`, `excluded.${column}`) })))
      .returning(column)
      .executeTakeFirstOrThrow();
    return row[column] ?? value;
  }

  userHandle(userId: string, candidate: string): Promise<string> {
    return this.setOnce(userId, 'webauthn_handle', candidate);
  }

  async userByHandle(handle: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('mfa_users').select('user_id').where('webauthn_handle', '=', handle).executeTakeFirst();
    return row?.user_id;
  }

  requiredSince(userId: string, at: string): Promise<string> {
    return this.setOnce(userId, 'required_since', at);
  }
}
