import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Tables, TokensTable } from '../db/tables.js';
import type { TokenKind } from '../lib/token-format.js';

/** An API or app token as stored: never its value, only its digest and hint. */
export interface TokenRecord {
  readonly id: string;
  readonly kind: TokenKind;
  readonly userId: string;
  readonly appId: string | null;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly hint: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  /** The networks the token may be used from (`address/prefix`); null for anywhere. */
  readonly allowedCidrs: readonly string[] | null;
  /** The token that replaced this one by rotation, while this one lives out its grace. */
  readonly replacedBy: string | null;
  /** Whether children may be derived from it (contract §14.3); absent on a record built before its insertion. */
  readonly derivable?: boolean;
  /** Children whose `iat` is before this are dead (revoke-all). */
  readonly childrenRevokedBefore?: string | null;
  /** How many distinct children were seen in use; only where a list or detail reads it. */
  readonly childrenSeen?: number;
}

export type TokenRow = Selectable<Pick<
  TokensTable,
  'id' | 'kind' | 'user_id' | 'app_id' | 'name' | 'scopes' | 'hint' | 'created_at' | 'expires_at' | 'last_used_at' | 'allowed_cidrs' | 'replaced_by' | 'derivable' | 'children_revoked_before'
>> & { readonly children_seen?: number | string | bigint | null };

export const TOKEN_COLUMNS = [
  'tokens.id',
  'tokens.kind',
  'tokens.user_id',
  'tokens.app_id',
  'tokens.name',
  'tokens.scopes',
  'tokens.hint',
  'tokens.created_at',
  'tokens.expires_at',
  'tokens.last_used_at',
  'tokens.allowed_cidrs',
  'tokens.replaced_by',
  'tokens.derivable',
  'tokens.children_revoked_before',
] as const;

/** The column `children_seen` of a list or detail read: distinct children seen in use. */
export const childrenSeen = (eb: ExpressionBuilder<Tables, 'tokens'>) =>
  eb.selectFrom('derived_seen').select((sub) => sub.fn.count<number | string>('derived_seen.child_id').distinct().as('n')).whereRef('derived_seen.token_id', '=', 'tokens.id').as('children_seen');

export function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    kind: row.kind,
    userId: row.user_id,
    appId: row.app_id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    hint: row.hint,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    allowedCidrs: row.allowed_cidrs === null ? null : (JSON.parse(row.allowed_cidrs) as string[]),
    replacedBy: row.replaced_by,
    derivable: row.derivable === 1,
    childrenRevokedBefore: row.children_revoked_before,
    ...(row.children_seen === undefined ? {} : { childrenSeen: Number(row.children_seen ?? 0) }),
  };
}
