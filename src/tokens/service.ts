import { randomUUID } from 'node:crypto';
import { auditEvent, type Details, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, DAY_MS, iso } from '../clock.js';
import { capReached, DEFAULT_CAPS, type OwnershipCaps } from '../lib/caps.js';
import { keysetPage, type Page, type PageRequest } from '../lib/pages.js';
import { notFound, validationFailed, type FieldError } from '../errors.js';
import { isUuid } from '../lib/ids.js';
import { cleanLabel } from '../lib/text.js';
import { parseCidrs } from './cidrs.js';
import { creationExpiry, NO_POLICY, type TokenPolicy } from './policy.js';
import { generateToken, tokenDigest, tokenHint, type TokenKind } from '../lib/token-format.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import type { ListedToken, TokenState } from './list-store.js';
import type { NewToken, RevokedToken, TokenRecord, TokenStore } from './store.js';
import type { UsageRecorder } from './usage.js';
import type { CreateApiTokenBody } from './bodies.js';
import { armed, derivableError } from './derived/parents.js';
import type { DerivationKeys } from './derived/keys.js';
import { countedType, type TokenCounts } from '../observability/metrics/tokens.js';

/** A token as this instance knows it: the store's record with this instance's unflushed last use. */
export function withPendingUse<T extends TokenRecord>(token: T, usage: UsageRecorder): T {
  const pending = usage.pendingUse(token.id);
  return pending !== null && (token.lastUsedAt === null || pending.at > token.lastUsedAt) ? { ...token, lastUsedAt: pending.at } : token;
}

/** How long ended (expired or revoked) tokens stay listed: as long as the audit log keeps their end (AUDIT_RETENTION_DAYS). */
export interface TokenHistory {
  readonly endedVisibleMs: number;
}

export const DEFAULT_HISTORY: TokenHistory = { endedVisibleMs: 365 * DAY_MS };

/** A freshly minted token: the value (shown once) and the record to store. */
export interface MintedToken {
  readonly value: string;
  readonly record: NewToken;
}

/** Creates a token value and its stored record; the value itself is never stored. */
export function mintToken(
  kind: TokenKind,
  fields: {
    userId: string;
    appId: string | null;
    name: string;
    scopes: readonly string[];
    createdAt: string;
    expiresAt: string | null;
    allowedCidrs: readonly string[] | null;
  },
): MintedToken {
  const value = generateToken(kind);
  return {
    value,
    record: { id: randomUUID(), kind, digest: tokenDigest(value), hint: tokenHint(value, kind), ...fields },
  };
}

/**
 * What every token event of the audit log says of its token: its type, its app for an app token,
 * and its name and hint, so a reader of the log knows which of their tokens it was.
 */
export const tokenDetails = ({ kind, appId, name, hint }: Pick<TokenRecord, 'kind' | 'appId' | 'name' | 'hint'>): Details => ({
  token_type: `${kind}_token`,
  ...(appId === null ? {} : { app_id: appId }),
  name,
  hint,
});

/** The allow-list a creation asks for, in stored form (null for none), or what is wrong with it. */
export function requestedCidrs(list: readonly string[] | undefined): readonly string[] | null | FieldError {
  return list === undefined ? null : parseCidrs(list);
}

export const isFieldError = (value: unknown): value is FieldError => typeof value === 'object' && value !== null && 'field' in value;

/** Rules for API tokens. */
export class TokenService {
  constructor(
    private readonly store: TokenStore,
    private readonly usage: UsageRecorder,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly catalogue: ScopeCatalogue,
    private readonly policy: TokenPolicy = NO_POLICY,
    private readonly caps: OwnershipCaps = DEFAULT_CAPS,
    private readonly history: TokenHistory = DEFAULT_HISTORY,
    private readonly counts: TokenCounts | null = null,
    /** DERIVE_KEK's keys; null or disabled: no token can be made derivable. */
    private readonly derivation: DerivationKeys | null = null,
  ) {}

  async createApiToken(userId: string, input: CreateApiTokenBody, context: RequestContext): Promise<{ value: string; token: TokenRecord }> {
    const now = this.clock.now();
    const errors: FieldError[] = [];
    const name = cleanLabel(input.name, 'name', 100);
    if (typeof name !== 'string') errors.push(name);
    const expiresAt = creationExpiry(input.expires_at === undefined ? null : Date.parse(input.expires_at), now, this.policy, 'expires_at');
    if (isFieldError(expiresAt)) errors.push(expiresAt);
    const allowedCidrs = requestedCidrs(input.allowed_cidrs);
    if (isFieldError(allowedCidrs)) errors.push(allowedCidrs);
    errors.push(...this.catalogue.check('api_token', input.scopes));
    const derivable = derivableError(input.derivable, this.derivation);
    if (derivable) errors.push(derivable);
    if (typeof name !== 'string' || isFieldError(expiresAt) || isFieldError(allowedCidrs) || errors.length > 0) throw validationFailed(errors);

    const { value, record } = armed(mintToken('api', {
      userId,
      appId: null,
      name,
      scopes: [...new Set(input.scopes ?? [])].sort(),
      createdAt: iso(now),
      expiresAt: expiresAt === null ? null : iso(expiresAt),
      allowedCidrs,
    }), input.derivable, this.derivation);
    const details = { ...tokenDetails(record), scopes: record.scopes, expires_at: record.expiresAt, ...(record.derivation ? { derivable: true } : {}) };
    const event = auditEvent({ type: 'token.created', userId, subject: { type: 'token', id: record.id }, details }, context, now);
    if (!(await this.store.insert(record, event, this.caps.apiTokensPerUser))) throw capReached('apiTokensPerUser', this.caps.apiTokensPerUser);
    this.counts?.created('api_token', 'api');
    return { value, token: { ...record, lastUsedAt: null, replacedBy: null, derivable: record.derivation != null } };
  }

  /** A page of the caller's API tokens in `state`, newest first, with this instance's unflushed last uses. */
  async listApiTokens(userId: string, state: TokenState, page: PageRequest): Promise<Page<ListedToken>> {
    const now = this.clock.now();
    const rows = await this.store.list({ owner: { userId }, state, now: iso(now), endedSince: iso(now - this.history.endedVisibleMs), page });
    const { items, nextCursor } = keysetPage(rows, page);
    return { items: items.map((t) => withPendingUse(t, this.usage)), nextCursor };
  }

  /**
   * Revokes an API token of the caller, or an app token of one of their apps. Someone else's token
   * is reported as not found, exactly like a missing one.
   */
  async revoke(userId: string, tokenId: string, context: RequestContext): Promise<void> {
    if (!isUuid(tokenId)) throw notFound();
    const now = this.clock.now();
    let ended: RevokedToken | undefined;
    const audit = (revoked: RevokedToken) =>
      auditEvent({ type: 'token.revoked', userId, subject: { type: 'token', id: (ended = revoked).id }, details: tokenDetails(revoked) }, context, now);
    if (!(await this.store.revoke(tokenId, userId, iso(now), audit))) throw notFound();
    if (ended) this.counts?.revoked(countedType(ended.kind), 'user');
    await this.feed.committed('token', tokenId);
  }
}
