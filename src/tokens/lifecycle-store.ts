import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { AuditEvent } from '../audit/events.js';
import { recordAudit } from '../audit/store.js';
import { changeTransaction, recordChange } from '../changes/store.js';
import type { Tables } from '../db/tables.js';
import { inState, listed, type ListedToken, listTokens, TOKEN_STATES, type TokenListQuery } from './list-store.js';
import { insertToken, type NewToken, type RevokedToken, revokeIn, TOKEN_COLUMNS, type TokenDevice, type TokenRecord, toRecord } from './store.js';
import { childrenSeen } from './record-store.js';

/** A token with what its detail shows beyond the list item. */
export interface TokenDetail extends ListedToken {
  readonly lastUsedIp: string | null;
  readonly scopesUsed: readonly string[];
  /** The device flow's client and device for a token it issued; null for one made otherwise. */
  readonly device: TokenDevice | null;
}

/** What a PATCH changes; absent fields stay as they are. */
export interface TokenChanges {
  readonly name?: string;
  readonly scopes?: readonly string[];
  readonly allowedCidrs?: readonly string[];
  /** Derivation turned off: the wrapped key is forgotten, so every child dies (contract §14.3). */
  readonly derivable?: false;
}

/** How many rows one sweep revokes per round; the rest wait for the next round. */
const SWEEP_BATCH = 500;

/** Unrevoked and unexpired at `now`. */
const activeAt = (now: string) => (eb: ExpressionBuilder<Tables, 'tokens'>) =>
  eb.and([eb('tokens.revoked_at', 'is', null), eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', now)])]);

/**
 * The row of `token`, still with the name, scopes, allow-list and replacement it was read with (a
 * rotation read before a rename would give the new token the old name).
 */
const unchanged = (token: TokenRecord) => (eb: ExpressionBuilder<Tables, 'tokens'>) =>
  eb.and([
    eb('tokens.id', '=', token.id),
    eb('tokens.user_id', '=', token.userId),
    eb('tokens.name', '=', token.name),
    eb('tokens.scopes', '=', JSON.stringify(token.scopes)),
    token.allowedCidrs === null ? eb('tokens.allowed_cidrs', 'is', null) : eb('tokens.allowed_cidrs', '=', JSON.stringify(token.allowedCidrs)),
    token.replacedBy === null ? eb('tokens.replaced_by', 'is', null) : eb('tokens.replaced_by', '=', token.replacedBy),
  ]);

/** SQL for the token lifecycle: detail, narrowing, rotation, app token lists and the sweeps. */
export class TokenLifecycleStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** An active token of `userId` (API, or app token of one of their apps), or undefined. */
  findActive(id: string, userId: string, now: string): Promise<TokenDetail | undefined> {
    return this.find(id, userId, now, inState('active', now, now));
  }

  /** A token of `userId` in any state, an ended one while it ended after `endedSince`; or undefined. */
  findVisible(id: string, userId: string, now: string, endedSince: string): Promise<TokenDetail | undefined> {
    return this.find(id, userId, now, (eb) => eb.or(TOKEN_STATES.map((state) => inState(state, now, endedSince)(eb))));
  }

  private async find(id: string, userId: string, now: string, visible: (eb: ExpressionBuilder<Tables, 'tokens'>) => Expression<SqlBool>): Promise<TokenDetail | undefined> {
    const row = await this.db
      .selectFrom('tokens')
      .select([...TOKEN_COLUMNS, 'tokens.last_used_ip', 'tokens.revoked_at', 'tokens.origin', 'tokens.client_id', 'tokens.device_name', childrenSeen])
      .where('tokens.id', '=', id)
      .where('tokens.user_id', '=', userId)
      .where(visible)
      .executeTakeFirst();
    if (!row) return undefined;
    const used = await this.db.selectFrom('token_scope_uses').select('scope').where('token_id', '=', id).orderBy('scope').execute();
    const device = row.origin === 'device_flow' && row.client_id !== null ? { clientId: row.client_id, deviceName: row.device_name } : null;
    return { ...listed(row, now), lastUsedIp: row.last_used_ip, scopesUsed: used.map((u) => u.scope), device };
  }

  /** Whether `userId` has a token `id` that was rotated, whether or not it still works. */
  async isReplaced(id: string, userId: string): Promise<boolean> {
    const row = await this.db.selectFrom('tokens').select('id').where('id', '=', id).where('user_id', '=', userId).where('replaced_by', 'is not', null).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Applies `changes` if the token still carries exactly the scopes and allow-list the caller
   * checked them against (so two narrowings at once cannot combine into a widening), recording
   * `token.updated` in the change log and `event` in the audit log in the same transaction. False
   * when it did not.
   */
  async update(current: TokenRecord, changes: TokenChanges, at: string, event: AuditEvent): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const result = await trx
        .updateTable('tokens')
        .set({
          ...(changes.name === undefined ? {} : { name: changes.name }),
          ...(changes.scopes === undefined ? {} : { scopes: JSON.stringify(changes.scopes) }),
          ...(changes.allowedCidrs === undefined ? {} : { allowed_cidrs: JSON.stringify(changes.allowedCidrs) }),
          ...(changes.derivable === false ? { derivable: 0, derive_key: null } : {}),
        })
        .where(unchanged(current))
        .where(activeAt(at))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      const scopes = [...(changes.scopes ?? current.scopes)];
      const data = { token_id: current.id, scopes, ...(changes.derivable === false ? { derivable: false as const } : {}) };
      await recordChange(trx, 'token', current.id, at, { type: 'token.updated', data });
      await recordAudit(trx, event);
      return true;
    });
  }

  /**
   * Replaces `old` with `next` in one transaction. With no grace the old token is revoked now;
   * otherwise it expires at `graceEnd` (every instance refuses it by time) and `token.updated` tells
   * verifiers to ask again, when they learn the new expiry. A token still in its grace because it
   * was replaced by `old` is revoked now: a chain of rotations keeps at most two tokens alive.
   * `audit` names the audit events of the rotation, given the predecessors it revoked, written with
   * it. False when `old` is no longer active, was already replaced, or was narrowed since it was
   * read (the new token must not carry scopes or networks the old one no longer has).
   */
  async rotate(old: TokenRecord, next: NewToken, graceEnd: string | null, at: string, audit: (revoked: RevokedToken[]) => AuditEvent[]): Promise<boolean> {
    return changeTransaction(this.db, async (trx) => {
      const expiresAt = graceEnd === null || (old.expiresAt !== null && old.expiresAt < graceEnd) ? old.expiresAt : graceEnd;
      const result = await trx
        .updateTable('tokens')
        .set({ replaced_by: next.id, ...(graceEnd === null ? {} : { expires_at: expiresAt }) })
        .where(unchanged(old))
        .where(activeAt(at))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await insertToken(trx, next);
      if (graceEnd === null) await revokeIn(trx, old.id, at, null);
      else await recordChange(trx, 'token', old.id, at, { type: 'token.updated', data: { token_id: old.id, scopes: [...old.scopes] } });
      const predecessors = await trx.selectFrom('tokens').select('id').where('replaced_by', '=', old.id).where('revoked_at', 'is', null).execute();
      const revoked: RevokedToken[] = [];
      for (const { id } of predecessors) {
        const predecessor = await revokeIn(trx, id, at, null);
        if (predecessor) revoked.push(predecessor);
      }
      await recordAudit(trx, audit(revoked));
      return true;
    });
  }

  /**
   * The tokens of an app of `userId`, newest first, in the state and page `query` names; undefined
   * when the app is not theirs.
   */
  async listAppTokens(appId: string, userId: string, query: Omit<TokenListQuery, 'owner'>): Promise<ListedToken[] | undefined> {
    const app = await this.db.selectFrom('apps').select('id').where('id', '=', appId).where('user_id', '=', userId).executeTakeFirst();
    if (!app) return undefined;
    return listTokens(this.db, { ...query, owner: { appId } });
  }

  /**
   * Revokes rotated tokens whose grace ended by `now`, recording token.revoked in the change log
   * and `audit` of each in the audit log.
   */
  revokeEndedGraces(now: string, audit: (revoked: RevokedToken) => AuditEvent): Promise<number> {
    return this.revokePastExpiry(true, now, audit);
  }

  /** Revokes tokens that reached the expiry they were created with by `now`, as {@link revokeEndedGraces}. */
  revokeEndedLifetimes(now: string, audit: (revoked: RevokedToken) => AuditEvent): Promise<number> {
    return this.revokePastExpiry(false, now, audit);
  }

  /** Revokes active tokens last used (or created, if never used) before `cutoff`, with `audit` of each. */
  async revokeIdle(cutoff: string, now: string, audit: (revoked: RevokedToken) => AuditEvent): Promise<number> {
    const rows = await this.db
      .selectFrom('tokens')
      .select('id')
      .where(activeAt(now))
      .where((eb) => eb(eb.fn.coalesce('last_used_at', 'created_at'), '<', cutoff))
      .limit(SWEEP_BATCH)
      .execute();
    return this.revokeEach(rows, now, audit);
  }

  /**
   * Records the `notice` ('7d' or '1d') of each active, unreplaced token expiring after `after` and
   * by `until`, whose whole lifetime is longer than `minLifetimeMs` and that has not had it (nor, for
   * '7d', the later '1d'), with `audit` of it. One transaction per token, and the conditional update
   * of `expiry_notice` decides, so instances sweeping at once record each notice once between them.
   * A rotated token in its grace is expected to end: it gets none. Returns how many were recorded.
   */
  async noticeExpiring(notice: '7d' | '1d', after: string, until: string, minLifetimeMs: number, audit: (token: TokenRecord) => AuditEvent): Promise<number> {
    const earlier = notice === '1d' ? ['7d'] : [];
    const unnoticed = (eb: ExpressionBuilder<Tables, 'tokens'>) =>
      earlier.length === 0 ? eb('tokens.expiry_notice', 'is', null) : eb.or([eb('tokens.expiry_notice', 'is', null), eb('tokens.expiry_notice', 'in', earlier)]);
    let count = 0;
    let from: { expiresAt: string; id: string } | undefined;
    // Through the whole window in pages: a page of short-lived tokens (no notice) must not hide the rest.
    for (;;) {
      const rows = await this.db
        .selectFrom('tokens')
        .select(TOKEN_COLUMNS)
        .where('revoked_at', 'is', null)
        .where('replaced_by', 'is', null)
        .where('expires_at', '>', after)
        .where('expires_at', '<=', until)
        .where(unnoticed)
        .$if(from !== undefined, (q) => q.where((eb) => eb(eb.refTuple('expires_at', 'id'), '>', eb.tuple(from?.expiresAt ?? '', from?.id ?? ''))))
        .orderBy('expires_at')
        .orderBy('id')
        .limit(SWEEP_BATCH)
        .execute();
      for (const token of rows.map(toRecord)) {
        if (token.expiresAt === null || Date.parse(token.expiresAt) - Date.parse(token.createdAt) <= minLifetimeMs) continue;
        const recorded = await this.db.transaction().execute(async (trx) => {
          const result = await trx.updateTable('tokens').set({ expiry_notice: notice }).where('id', '=', token.id).where(unnoticed).executeTakeFirst();
          if (result.numUpdatedRows === 0n) return false;
          await recordAudit(trx, audit(token));
          return true;
        });
        if (recorded) count++;
      }
      const last = rows.at(-1);
      if (rows.length < SWEEP_BATCH || !last?.expires_at) return count;
      from = { expiresAt: last.expires_at, id: last.id };
    }
  }

  private async revokePastExpiry(replaced: boolean, now: string, audit: (revoked: RevokedToken) => AuditEvent): Promise<number> {
    const rows = await this.db
      .selectFrom('tokens')
      .select('id')
      .where('replaced_by', replaced ? 'is not' : 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '<=', now)
      .limit(SWEEP_BATCH)
      .execute();
    return this.revokeEach(rows, now, audit);
  }

  /** One transaction per token: instances sweeping at once each revoke a token at most once between them. */
  private async revokeEach(rows: ReadonlyArray<{ id: string }>, at: string, audit: (revoked: RevokedToken) => AuditEvent): Promise<number> {
    let count = 0;
    for (const { id } of rows) {
      const revoked = await changeTransaction(this.db, async (trx) => {
        const token = await revokeIn(trx, id, at, null);
        if (token) await recordAudit(trx, audit(token));
        return token;
      });
      if (revoked) count++;
    }
    return count;
  }
}
