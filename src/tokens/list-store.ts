import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { fewerThan, newestFirst } from '../db/pages.js';
import type { Tables } from '../db/tables.js';
import type { PageRequest } from '../lib/pages.js';
import { childrenSeen, TOKEN_COLUMNS, type TokenRecord, toRecord } from './record-store.js';

/** Where a token is in its life: usable, past its expiry, or revoked (by its owner, a leak report, a sweep). */
export const TOKEN_STATES = ['active', 'expired', 'revoked'] as const;
export type TokenState = (typeof TOKEN_STATES)[number];

/** A token as lists show it: its record, its state, and when it was revoked. */
export interface ListedToken extends TokenRecord {
  readonly state: TokenState;
  readonly revokedAt: string | null;
}

export type TokenOwner = { readonly userId: string } | { readonly appId: string };

/**
 * Whose tokens, in which state. `now` decides expiry; an ended token is listed while it ended after
 * `endedSince` (docs/token-lifecycle.md: as long as the audit log keeps the event that ended it).
 */
export interface TokenListQuery {
  readonly owner: TokenOwner;
  readonly state: TokenState;
  readonly now: string;
  readonly endedSince: string;
  readonly page?: PageRequest | undefined;
}

type Tokens = ExpressionBuilder<Tables, 'tokens'>;

/**
 * A token is expired when it reached its expiry before anything revoked it (the expiry sweep marks
 * it revoked at or after that moment), revoked when it was revoked before its expiry.
 */
export const inState = (state: TokenState, now: string, endedSince: string) => (eb: Tokens) => {
  if (state === 'active') return eb.and([eb('tokens.revoked_at', 'is', null), eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', now)])]);
  if (state === 'revoked') {
    const expiresLater = eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', eb.ref('tokens.revoked_at'))]);
    return eb.and([eb('tokens.revoked_at', 'is not', null), eb('tokens.revoked_at', '>', endedSince), expiresLater]);
  }
  const notRevokedBefore = eb.or([eb('tokens.revoked_at', 'is', null), eb('tokens.revoked_at', '>=', eb.ref('tokens.expires_at'))]);
  return eb.and([eb('tokens.expires_at', '<=', now), eb('tokens.expires_at', '>', endedSince), notRevokedBefore]);
};

/** An app's tokens, or a user's API tokens. */
const ownedBy = (owner: TokenOwner) => (eb: Tokens) =>
  'appId' in owner ? eb('tokens.app_id', '=', owner.appId) : eb.and([eb('tokens.user_id', '=', owner.userId), eb('tokens.kind', '=', 'api')]);

/** The state of a token read at `now`, by the rule of {@link inState}. */
export function stateOf(token: { readonly expiresAt: string | null; readonly revokedAt: string | null }, now: string): TokenState {
  const endedBy = token.revokedAt ?? now;
  if (token.expiresAt !== null && token.expiresAt <= endedBy) return 'expired';
  return token.revokedAt === null ? 'active' : 'revoked';
}

type Db = Kysely<Tables> | Transaction<Tables>;

/** The tokens `query` names, newest first. */
export async function listTokens(db: Db, query: TokenListQuery): Promise<ListedToken[]> {
  const base = db
    .selectFrom('tokens')
    .select([...TOKEN_COLUMNS, 'tokens.revoked_at', childrenSeen])
    .where(ownedBy(query.owner))
    .where(inState(query.state, query.now, query.endedSince));
  const rows = await newestFirst(base, 'tokens', query.page).execute();
  return rows.map((row) => listed(row, query.now));
}

/** A token row read at `now`, with its state; `revokedAt` only for a revoked one (the expiry sweep revokes expired ones too). */
export function listed(row: Parameters<typeof toRecord>[0] & { readonly revoked_at: string | null }, now: string): ListedToken {
  const state = stateOf({ expiresAt: row.expires_at, revokedAt: row.revoked_at }, now);
  return { ...toRecord(row), state, revokedAt: state === 'revoked' ? row.revoked_at : null };
}

/**
 * Whether the owner holds fewer than `max` tokens that count against a cap at `now`: active ones
 * not already replaced by a rotation (a token in its grace is on its way out: rotating never needs
 * room under the cap). Read inside the transaction that holds the owner's lock.
 */
export function fewerCountedThan(trx: Transaction<Tables>, owner: TokenOwner, now: string, max: number): Promise<boolean> {
  const counted = trx
    .selectFrom('tokens')
    .select('tokens.id')
    .where(ownedBy(owner))
    .where('tokens.replaced_by', 'is', null)
    .where(inState('active', now, now));
  return fewerThan(counted, max);
}
