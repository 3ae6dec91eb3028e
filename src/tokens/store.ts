import type { Kysely, Transaction } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { type ChangeTransaction, changeTransaction, recordChange } from '../changes/store.js';
import { lockOwner } from '../db/pages.js';
import type { StoredDerivation } from '../db/derived-tables.js';
import type { Tables } from '../db/tables.js';
import type { TokenKind } from '../lib/token-format.js';
import { fewerCountedThan, type ListedToken, listTokens, type TokenListQuery } from './list-store.js';
import { TOKEN_COLUMNS, type TokenRecord, type TokenRow, toRecord } from './record-store.js';

export { TOKEN_COLUMNS, type TokenRecord, toRecord } from './record-store.js';

export interface NewToken extends Omit<TokenRecord, 'lastUsedAt' | 'replacedBy'> {
  readonly digest: string;
  /** Set for a token the device flow issued: the client and the device it was issued to. */
  readonly device?: TokenDevice;
  /** Set when the token is created derivable (contract §14.3). */
  readonly derivation?: StoredDerivation | null;
}

/** Where a device-flow token went: the client and the (unverified) device name. */
export interface TokenDevice {
  readonly clientId: string;
  readonly deviceName: string | null;
}

/** What a revocation's audit event is told of the token it revoked. */
export interface RevokedToken {
  readonly id: string;
  readonly userId: string;
  readonly kind: TokenKind;
  readonly appId: string | null;
  readonly name: string;
  readonly hint: string;
}

/** What authenticating a token needs in one read: the token, its owner and its app. */
export interface TokenLookup {
  readonly token: TokenRecord;
  readonly revoked: boolean;
  readonly owner: { readonly id: string; readonly username: string; readonly email: string; readonly emailVerified: boolean };
  readonly app: { readonly id: string; readonly name: string } | null;
}

/** A lookup's row: the token, its revocation, its owner and its app. */
const toLookup = (row: TokenRow & { revoked_at: string | null; username: string; email: string; email_verified_at: string | null; app_name: string | null }): TokenLookup => ({
  token: toRecord(row),
  revoked: row.revoked_at !== null,
  owner: { id: row.user_id, username: row.username, email: row.email, emailVerified: row.email_verified_at !== null },
  app: row.app_id !== null && row.app_name !== null ? { id: row.app_id, name: row.app_name } : null,
});

/** Inserts a token inside the caller's transaction. */
export async function insertToken(trx: Kysely<Tables> | Transaction<Tables>, token: NewToken): Promise<void> {
  await trx
    .insertInto('tokens')
    .values({
      id: token.id,
      kind: token.kind,
      user_id: token.userId,
      app_id: token.appId,
      name: token.name,
      scopes: JSON.stringify(token.scopes),
      digest: token.digest,
      hint: token.hint,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      allowed_cidrs: token.allowedCidrs === null ? null : JSON.stringify(token.allowedCidrs),
      ...(token.device ? { origin: 'device_flow' as const, client_id: token.device.clientId, device_name: token.device.deviceName } : {}),
      ...(token.derivation ? { derivable: 1, derive_key: token.derivation.sealedKey, parent_ref: token.derivation.parentRef } : {}),
    })
    .execute();
}

/**
 * Revokes one unrevoked token (of `ownerId` when given) inside the caller's transaction and records
 * `token.revoked` in the change log with it. Undefined when there was nothing to revoke.
 */
export async function revokeIn(trx: ChangeTransaction, id: string, at: string, ownerId: string | null): Promise<RevokedToken | undefined> {
  const revoked = await trx
    .updateTable('tokens')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .$if(ownerId !== null, (q) => q.where('user_id', '=', ownerId ?? ''))
    .where('revoked_at', 'is', null)
    .returning(['kind', 'app_id', 'user_id', 'name', 'hint'])
    .executeTakeFirst();
  if (!revoked) return undefined;
  const tokenType = revoked.kind === 'api' ? 'api_token' : 'app_token';
  const data = { token_id: id, token_type: tokenType, user_id: revoked.user_id, ...(revoked.app_id === null ? {} : { app_id: revoked.app_id }) } as const;
  await recordChange(trx, 'token', id, at, { type: 'token.revoked', data });
  return { id, kind: revoked.kind, appId: revoked.app_id, userId: revoked.user_id, name: revoked.name, hint: revoked.hint };
}

/**
 * Inserts `token` unless its owner already holds `cap` tokens that count against it (false then);
 * without a cap, always. The owner's lock is taken first, so insertions at once are counted one
 * after the other.
 */
async function insertWithin(trx: Transaction<Tables>, token: NewToken, cap: number | undefined): Promise<boolean> {
  if (cap !== undefined) {
    await lockOwner(trx, 'users', token.userId);
    if (!(await fewerCountedThan(trx, { userId: token.userId }, token.createdAt, cap))) return false;
  }
  await insertToken(trx, token);
  return true;
}

interface PendingInsert {
  readonly token: NewToken;
  readonly event: AuditEvent | undefined;
  readonly cap: number | undefined;
  readonly resolve: (inserted: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/** SQL for API and app tokens. */
export class TokenStore {
  private batch: PendingInsert[] = [];

  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * Inserts a token, unless its owner holds `cap` active API tokens already (false then). Inserts
   * that arrive in the same turn of the event loop share one transaction (group commit): one write
   * of the shared pages instead of one per token; each is counted against the cap after those
   * before it. Each caller's promise settles only after the commit, so a token is durable before
   * its creation is answered; if the shared transaction fails, each insert is retried alone so one
   * bad row fails only its caller. The audit event of the creation commits with it.
   */
  insert(token: NewToken, event?: AuditEvent, cap?: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.batch.push({ token, event, cap, resolve, reject });
      if (this.batch.length === 1) setImmediate(() => void this.commitBatch());
    });
  }

  private async commitBatch(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    try {
      const inserted = await this.db.transaction().execute(async (trx) => {
        const done: boolean[] = [];
        for (const { token, cap } of batch) done.push(await insertWithin(trx, token, cap));
        // The batch's events in one statement: recording costs token creation one statement per batch.
        await recordAudit(trx, batch.flatMap(({ event }, i) => (event && done[i] ? [event] : [])));
        return done;
      });
      batch.forEach((entry, i) => entry.resolve(inserted[i] === true));
    } catch {
      for (const entry of batch) {
        this.db
          .transaction()
          .execute(async (trx) => {
            const inserted = await insertWithin(trx, entry.token, entry.cap);
            if (inserted && entry.event) await recordAudit(trx, entry.event);
            return inserted;
          })
          .then(entry.resolve, entry.reject);
      }
    }
  }

  /** The tokens `query` names, newest first, a page at a time. */
  list(query: TokenListQuery): Promise<ListedToken[]> {
    return listTokens(this.db, query);
  }

  async findByDigest(digest: string): Promise<TokenLookup | undefined> {
    const row = await this.lookup().where('digest', '=', digest).executeTakeFirst();
    return row && toLookup(row);
  }

  /** The tokens among `digests`, in one query (a leak report's strings). */
  /** The tokens among `digests`, in the order each was first given (a leak report's order). */
  async findByDigests(digests: readonly string[]): Promise<TokenLookup[]> {
    if (digests.length === 0) return [];
    const order = new Map<string, number>();
    for (const [i, digest] of digests.entries()) if (!order.has(digest)) order.set(digest, i);
    const rows = await this.lookup().select('tokens.digest').where('digest', 'in', digests).execute();
    return rows.sort((a, b) => (order.get(a.digest) ?? 0) - (order.get(b.digest) ?? 0)).map(toLookup);
  }
  private lookup() {
    const tokens = this.db.selectFrom('tokens').innerJoin('users', 'users.id', 'tokens.user_id').leftJoin('apps', 'apps.id', 'tokens.app_id');
    return tokens.select(TOKEN_COLUMNS).select(['tokens.revoked_at', 'users.username', 'users.email', 'users.email_verified_at', 'apps.name as app_name']);
  }

  /**
   * Revokes a token owned by `userId` (an API token, or an app token of one of their apps).
   * False when it does not exist, belongs to someone else or is already revoked. `audit` is the
   * event of the revocation, recorded with it, told what kind of token it was.
   */
  async revoke(id: string, userId: string, at: string, audit?: (revoked: RevokedToken) => AuditEvent, also?: (trx: Transaction<Tables>) => Promise<void>): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const revoked = await revokeIn(trx, id, at, userId);
      if (revoked && audit) await recordAudit(trx, audit(revoked));
      if (revoked) await also?.(trx);
      return revoked !== undefined;
    });
  }

  /**
   * Writes coalesced uses in one transaction: the newest time and address of each token (never
   * moving a time backwards) and the scopes it exercised, added to its set (a token deleted
   * meanwhile adds nothing).
   */
  async recordUsage(uses: ReadonlyMap<string, TokenUse>): Promise<void> {
    if (uses.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, use] of uses) {
        await trx
          .updateTable('tokens')
          .set({ last_used_at: use.at, ...(use.address === null ? {} : { last_used_ip: use.address }) })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', use.at)]))
          .execute();
        for (const scope of use.scopes) {
          await trx
            .insertInto('token_scope_uses')
            .columns(['token_id', 'scope'])
            .expression((eb) => eb.selectFrom('tokens').select(['tokens.id', eb.val(scope).as('scope')]).where('tokens.id', '=', id))
            .onConflict((oc) => oc.doNothing())
            .execute();
        }
      }
    });
  }
}

/** What one flush records of a token: its last use (time, client address) and the scopes it exercised. */
export interface TokenUse {
  readonly at: string;
  /** Null when the last use came without a client address (introspection by a platform service). */
  readonly address: string | null;
  readonly scopes: readonly string[];
}
