import type { Kysely, Transaction } from 'kysely';
import type { StoredDerivation } from '../../db/derived-tables.js';
import type { Tables } from '../../db/tables.js';
import { TOKEN_COLUMNS, type TokenLookup, toRecord } from '../store.js';

/** A parent found by its reference: the lookup of an opaque token, plus what its children need. */
export interface ParentLookup extends TokenLookup {
  readonly derivable: boolean;
  /** The derivation key as stored (sealed); null when the token is not derivable. */
  readonly sealedKey: string | null;
  readonly childrenRevokedBefore: string | null;
}

/** What a child's use records in `derived_seen` (contract §14.6). */
export interface SeenChild {
  readonly tokenId: string;
  readonly childId: string;
  readonly labels: readonly string[];
  /** The caveat summary shown to the owner. */
  readonly caveats: Readonly<Record<string, unknown>>;
  readonly at: string;
  readonly address: string | null;
}

/** The derivation columns of a token being inserted or made derivable. */
export const derivationColumns = (derivation: StoredDerivation | null) =>
  derivation === null ? { derivable: 0, derive_key: null } : { derivable: 1, derive_key: derivation.sealedKey, parent_ref: derivation.parentRef };

/** SQL for derivable parents, revoked children and children seen in use. */
export class DerivedStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** The token whose children carry `ref` (32 hex digits), with its owner and app. */
  async parent(ref: string): Promise<ParentLookup | undefined> {
    const row = await this.db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .leftJoin('apps', 'apps.id', 'tokens.app_id')
      .select(TOKEN_COLUMNS)
      .select(['tokens.revoked_at', 'tokens.derivable', 'tokens.derive_key', 'tokens.children_revoked_before', 'users.username', 'users.email', 'users.email_verified_at', 'apps.name as app_name'])
      .where('tokens.parent_ref', '=', ref)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      token: toRecord(row),
      revoked: row.revoked_at !== null,
      owner: { id: row.user_id, username: row.username, email: row.email, emailVerified: row.email_verified_at !== null },
      app: row.app_id !== null && row.app_name !== null ? { id: row.app_id, name: row.app_name } : null,
      derivable: row.derivable === 1 && row.derive_key !== null,
      sealedKey: row.derive_key,
      childrenRevokedBefore: row.children_revoked_before,
    };
  }

  /** Whether `childId` of the token is revoked. */
  async childRevoked(tokenId: string, childId: string): Promise<boolean> {
    const row = await this.db.selectFrom('derived_revocations').select('child_id').where('token_id', '=', tokenId).where('child_id', '=', childId).executeTakeFirst();
    return row !== undefined;
  }

  /** Revokes one child id until `keepUntil` (any later revocation of it keeps the first). */
  async revokeChild(tokenId: string, childId: string, at: string, keepUntil: string): Promise<void> {
    await this.db.insertInto('derived_revocations').values({ token_id: tokenId, child_id: childId, revoked_at: at, keep_until: keepUntil }).onConflict((oc) => oc.doNothing()).execute();
  }

  /** Replaces a wrapped key by the same key under the current DERIVE_KEK, unless another instance did first. */
  async rewrap(tokenId: string, from: string, to: string): Promise<void> {
    await this.db.updateTable('tokens').set({ derive_key: to }).where('id', '=', tokenId).where('derive_key', '=', from).execute();
  }

  /** Turns derivation on (at creation, inside its transaction) or off: off forgets the key, so every child dies. */
  async setDerivation(trx: Kysely<Tables> | Transaction<Tables>, tokenId: string, derivation: StoredDerivation | null): Promise<void> {
    await trx.updateTable('tokens').set(derivationColumns(derivation)).where('id', '=', tokenId).execute();
  }

  /**
   * Records children's uses in one transaction: the first use of a digest inserts its row, later
   * ones move its last use forward (never backwards), so instances flushing at once agree.
   */
  async recordSeen(uses: ReadonlyMap<string, SeenChild>): Promise<void> {
    if (uses.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [digest, use] of uses) {
        await trx
          .insertInto('derived_seen')
          .columns(['digest', 'token_id', 'child_id', 'labels', 'caveats', 'first_seen_at', 'last_used_at', 'last_used_ip'])
          .expression((eb) =>
            eb
              .selectFrom('tokens')
              .select([
                eb.val(digest).as('digest'),
                'tokens.id',
                eb.val(use.childId).as('child_id'),
                eb.val(JSON.stringify(use.labels)).as('labels'),
                eb.val(JSON.stringify(use.caveats)).as('caveats'),
                eb.val(use.at).as('first_seen_at'),
                eb.val(use.at).as('last_used_at'),
                eb.val(use.address).as('last_used_ip'),
              ])
              .where('tokens.id', '=', use.tokenId),
          )
          .onConflict((oc) =>
            oc.column('digest').doUpdateSet((eb) => ({ last_used_at: eb.ref('excluded.last_used_at'), last_used_ip: eb.fn.coalesce('excluded.last_used_ip', 'derived_seen.last_used_ip') })).where('derived_seen.last_used_at', '<', (eb) => eb.ref('excluded.last_used_at')),
          )
          .execute();
      }
    });
  }

  /** How many distinct children of each token were seen in use. */
  async seenCounts(tokenIds: readonly string[]): Promise<Map<string, number>> {
    if (tokenIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('derived_seen').select(['token_id', (eb) => eb.fn.count<number | string>('child_id').distinct().as('n')]).where('token_id', 'in', tokenIds).groupBy('token_id').execute();
    return new Map(rows.map((r) => [r.token_id, Number(r.n)]));
  }

  /** Drops revocations past their keep time: every child with that id has expired. */
  async dropEndedRevocations(now: string): Promise<number> {
    const result = await this.db.deleteFrom('derived_revocations').where('keep_until', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
