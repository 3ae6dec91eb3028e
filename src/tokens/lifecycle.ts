import { type AuditEvent, auditEvent, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { conflict, type FieldError, notFound, ProblemError, validationFailed } from '../errors.js';
import { isUuid } from '../lib/ids.js';
import { cleanLabel } from '../lib/text.js';
import { narrows, parseCidrs } from './cidrs.js';
import type { TokenChanges, TokenDetail, TokenLifecycleStore } from './lifecycle-store.js';
import { impliedExpiry, type TokenPolicy } from './policy.js';
import { DEFAULT_HISTORY, isFieldError, mintToken, type TokenHistory, tokenDetails, withPendingUse } from './service.js';
import type { ListedToken, TokenState } from './list-store.js';
import { keysetPage, type Page, type PageRequest } from '../lib/pages.js';
import type { RevokedToken, TokenRecord } from './store.js';
import type { UsageRecorder } from './usage.js';
import type { UpdateTokenBody } from './bodies.js';
import { armed, derivableChange, derivableError } from './derived/parents.js';
import type { DerivationKeys } from './derived/keys.js';
import { countedType, type TokenCounts } from '../observability/metrics/tokens.js';

/** The longest grace a rotation may give the old token: a week. */
export const MAX_GRACE_SECONDS = 604_800;

/** A narrowing or rotation that lost a race is tried again against what won, this many times in all. */
const UPDATE_ATTEMPTS = 3;

const alreadyRotated = () => conflict('The token was already rotated: rotate its replacement instead.');

/**
 * The token lifecycle (docs/token-lifecycle.md): detail, narrowing, rotation, an app's tokens. Tokens are the
 * caller's API tokens and the app tokens of their apps; anyone else's is not found, like a missing one.
 */
export class TokenLifecycle {
  constructor(
    private readonly store: TokenLifecycleStore,
    private readonly usage: UsageRecorder,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly policy: TokenPolicy,
    private readonly history: TokenHistory = DEFAULT_HISTORY,
    private readonly counts: TokenCounts | null = null,
    private readonly derivation: DerivationKeys | null = null,
  ) {}

  /** Listed tokens that ended before this are no longer shown. */
  private endedSince(now: number): string {
    return iso(now - this.history.endedVisibleMs);
  }

  /**
   * A token with its last use and the scopes it exercised, this instance's unflushed ones included;
   * an expired or revoked one while lists still show it.
   */
  detail(userId: string, id: string): Promise<TokenDetail> {
    const now = this.clock.now();
    return this.withUse(isUuid(id) ? this.store.findVisible(id, userId, iso(now), this.endedSince(now)) : undefined);
  }

  /** An active token, as {@link detail}: only an active one can be changed or rotated. */
  private active(userId: string, id: string): Promise<TokenDetail> {
    return this.withUse(isUuid(id) ? this.store.findActive(id, userId, iso(this.clock.now())) : undefined);
  }

  private async withUse(found: Promise<TokenDetail | undefined> | undefined): Promise<TokenDetail> {
    const token = await found;
    if (!token) throw notFound();
    const pending = this.usage.pendingUse(token.id);
    if (pending === null) return token;
    const scopesUsed = [...new Set([...token.scopesUsed, ...pending.scopes])].sort();
    const newer = token.lastUsedAt === null || pending.at > token.lastUsedAt;
    return { ...withPendingUse(token, this.usage), lastUsedIp: newer && pending.address !== null ? pending.address : token.lastUsedIp, scopesUsed };
  }

  /**
   * Renames or narrows a token: scopes and networks may only shrink. Effective on the next request
   * on every instance: the change log entry makes every authenticator drop its cached copy. A
   * rotated token is 409, also when the rotation lands between the read and the write.
   */
  async update(userId: string, id: string, input: UpdateTokenBody, context: RequestContext): Promise<TokenDetail> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.active(userId, id);
      // A replaced token is on its way out: a narrowing of it would not reach its replacement.
      if (current.replacedBy !== null) throw conflict('The token was rotated: change its replacement instead.');
      const changes = checkChanges(current, input);
      // A PATCH that names nothing to change, or only what the token already has, changes
      // nothing: no write, no event, no change for the other instances.
      if (Object.keys(changes).length === 0) return current;
      const now = this.clock.now();
      if (await this.store.update(current, changes, iso(now), updated(current, changes, context, now))) break;
      if (attempt === UPDATE_ATTEMPTS) throw conflict('The token was changed by another request meanwhile; read it and try again.');
    }
    await this.feed.committed('token', id);
    return this.active(userId, id);
  }

  /**
   * Issues a token of the same kind, name, scopes, networks and lifetime length (counted from now,
   * within the maximum lifetime), and ends the old one after `graceSeconds` (at once for 0). Of two
   * rotations at once one wins and the other is 409, as if it came second; a narrowing that lands
   * meanwhile is read again, so the new token never has what the old one just lost.
   */
  async rotate(userId: string, id: string, graceSeconds: number, context: RequestContext, derivable?: boolean): Promise<{ value: string; token: TokenRecord; replaces: string }> {
    const refusal = derivableError(derivable, this.derivation);
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
      throw validationFailed([{ field: 'grace_seconds', message: `must be a whole number from 0 to ${MAX_GRACE_SECONDS}` }, ...(refusal ? [refusal] : [])]);
    }
    if (refusal) throw validationFailed([refusal]);
    for (let attempt = 1; ; attempt++) {
      const old = await this.active(userId, id).catch(async (error: unknown) => {
        // A rotation without grace revokes the old token at once: it is gone, but rotated all the same.
        const missing = error instanceof ProblemError && error.code === 'not_found';
        if (missing && isUuid(id) && (await this.store.isReplaced(id, userId))) throw alreadyRotated();
        throw error;
      });
      if (old.replacedBy !== null) throw alreadyRotated();
      const rotated = await this.replace(old, graceSeconds, context, derivable);
      if (rotated) {
        await this.feed.committed('token', id);
        return rotated;
      }
      if (attempt === UPDATE_ATTEMPTS) throw conflict('The token was changed by another request meanwhile; read it and try again.');
    }
  }

  /** Mints the replacement of `old` and commits the rotation; undefined when `old` changed since it was read. */
  private async replace(old: TokenRecord, graceSeconds: number, context: RequestContext, derivable?: boolean): Promise<{ value: string; token: TokenRecord; replaces: string } | undefined> {
    const { userId } = old;
    const now = this.clock.now();
    const lifetime = old.expiresAt === null ? null : Date.parse(old.expiresAt) - Date.parse(old.createdAt);
    const expiresAt = impliedExpiry(lifetime, now, this.policy);
    const { value, record } = armed(mintToken(old.kind, {
      userId,
      appId: old.appId,
      name: old.name,
      scopes: old.scopes,
      createdAt: iso(now),
      expiresAt: expiresAt === null ? null : iso(expiresAt),
      allowedCidrs: old.allowedCidrs,
    }), derivable, this.derivation);
    const graceEnd = graceSeconds === 0 ? null : iso(now + graceSeconds * 1000);
    let endedAgain = 0;
    const audit = (revoked: RevokedToken[]): AuditEvent[] => {
      endedAgain = revoked.length;
      return [
        auditEvent(
          { type: 'token.rotated', userId, subject: { type: 'token', id: old.id }, details: { ...tokenDetails(old), new_token_id: record.id, grace_seconds: graceSeconds } },
          context,
          now,
        ),
        // A token still in its grace from an earlier rotation ends now (a chain keeps two tokens alive at most).
        ...revoked.map((t) =>
          auditEvent({ type: 'token.revoked', userId, subject: { type: 'token', id: t.id }, details: { ...tokenDetails(t), reason: 'rotated_again' } }, context, now),
        ),
      ];
    };
    if (!(await this.store.rotate(old, record, graceEnd, iso(now), audit))) return undefined;
    const type = countedType(old.kind);
    this.counts?.created(type, 'rotation');
    // Without a grace the old token ends now too; with one, the sweep counts it when its grace ends.
    const ended = endedAgain + (graceEnd === null ? 1 : 0);
    for (let i = 0; i < ended; i++) this.counts?.revoked(type, 'rotation');
    return { value, token: { ...record, lastUsedAt: null, replacedBy: null, derivable: record.derivation != null }, replaces: old.id };
  }

  /** A page of the tokens in `state` of one of the caller's apps, newest first. */
  async appTokens(userId: string, appId: string, state: TokenState, page: PageRequest): Promise<Page<ListedToken>> {
    const now = this.clock.now();
    const query = { state, now: iso(now), endedSince: this.endedSince(now), page };
    const rows = isUuid(appId) ? await this.store.listAppTokens(appId, userId, query) : undefined;
    if (!rows) throw notFound();
    const { items, nextCursor } = keysetPage(rows, page);
    return { items: items.map((t) => withPendingUse(t, this.usage)), nextCursor };
  }
}

/** `token.updated`, with the new values of what changed. */
function updated(current: TokenRecord, changes: TokenChanges, context: RequestContext, now: number): AuditEvent {
  const details = {
    // A renamed token is named by its new name.
    ...tokenDetails(current),
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...(changes.scopes === undefined ? {} : { scopes: changes.scopes }),
    ...(changes.allowedCidrs === undefined ? {} : { allowed_cidrs: changes.allowedCidrs }),
    ...(changes.derivable === false ? { derivable: false } : {}),
  };
  return auditEvent({ type: 'token.updated', userId: current.userId, subject: { type: 'token', id: current.id }, details }, context, now);
}

/** The changes a PATCH asks for, checked against the token as it is: only renames and narrowings. */
function checkChanges(current: TokenRecord, input: UpdateTokenBody): TokenChanges {
  const errors: FieldError[] = [];
  const name = input.name === undefined ? undefined : cleanLabel(input.name, 'name', 100);
  if (name !== undefined && typeof name !== 'string') errors.push(name);
  let scopes: string[] | undefined;
  if (input.scopes !== undefined) {
    scopes = [...new Set(input.scopes)].sort();
    if (scopes.length !== input.scopes.length) errors.push({ field: 'scopes', message: 'must not list an item twice' });
    else if (!scopes.every((s) => current.scopes.includes(s))) errors.push({ field: 'scopes', message: 'may only remove scopes the token has' });
  }
  let allowedCidrs: string[] | undefined;
  if (input.allowed_cidrs !== undefined) {
    const parsed = parseCidrs(input.allowed_cidrs);
    if (isFieldError(parsed)) errors.push(parsed);
    else if (parsed.length === 0 || !narrows(current.allowedCidrs, parsed)) {
      errors.push({ field: 'allowed_cidrs', message: 'every network must lie inside one the token already allows' });
    } else allowedCidrs = parsed;
  }
  const derivable = derivableChange(current, input.derivable);
  if (isFieldError(derivable)) errors.push(derivable);
  if (errors.length > 0 || (name !== undefined && typeof name !== 'string')) throw validationFailed(errors);
  return {
    ...(derivable === false ? { derivable } : {}),
    ...(name === undefined || name === current.name ? {} : { name }),
    ...(scopes === undefined || sameSet(scopes, current.scopes) ? {} : { scopes }),
    ...(allowedCidrs === undefined || (current.allowedCidrs !== null && sameSet(allowedCidrs, current.allowedCidrs)) ? {} : { allowedCidrs }),
  };
}

/** Whether two lists without repeats hold the same items, in any order. */
const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item) => b.includes(item));
