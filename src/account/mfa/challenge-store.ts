import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** Why a WebAuthn challenge was issued: a challenge of one ceremony never serves another. */
export type ChallengePurpose = 'register' | 'second_factor' | 'reauth' | 'passkey_login';

/** A challenge waiting for its ceremony (contract §12.6: 32 bytes, 5 minutes, single use). */
export interface StoredChallenge {
  readonly id: string;
  readonly purpose: ChallengePurpose;
  /** The user it was issued to; null for passkey login, bound to its `challenge_id` alone. */
  readonly userId: string | null;
  /** base64url. */
  readonly challenge: string;
  readonly expiresAt: string;
}

/** SQL for WebAuthn challenges. */
export interface ChallengeStore {
  insert(challenge: StoredChallenge): Promise<void>;
  /**
   * Takes the challenge `id` for a ceremony of `purpose` by `userId`: it is deleted whatever
   * follows, and returned only when it was issued for that purpose and user and is unexpired at
   * `now`. One statement, so two ceremonies cannot both take it.
   */
  take(id: string, purpose: ChallengePurpose, userId: string | null, now: string): Promise<StoredChallenge | undefined>;
  deleteExpired(now: string): Promise<number>;
}

export class SqlChallengeStore implements ChallengeStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async insert(c: StoredChallenge): Promise<void> {
    await this.db.insertInto('webauthn_challenges').values({ id: c.id, purpose: c.purpose, user_id: c.userId, challenge: c.challenge, expires_at: c.expiresAt }).execute();
  }

  async take(id: string, purpose: ChallengePurpose, userId: string | null, now: string): Promise<StoredChallenge | undefined> {
    const row = await this.db.deleteFrom('webauthn_challenges').where('id', '=', id).returningAll().executeTakeFirst();
    if (!row || row.purpose !== purpose || row.user_id !== userId || row.expires_at <= now) return undefined;
    return { id: row.id, purpose, userId: row.user_id, challenge: row.challenge, expiresAt: row.expires_at };
  }

  async deleteExpired(now: string): Promise<number> {
    const result = await this.db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
