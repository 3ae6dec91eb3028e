import { randomUUID } from 'node:crypto';
import { type AuditEvent, auditEvent, type RequestContext } from '../audit/events.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { type FieldError, insufficientScope, notFound, validationFailed } from '../errors.js';
import { capReached, DEFAULT_CAPS, type OwnershipCaps } from '../lib/caps.js';
import { isUuid } from '../lib/ids.js';
import { keysetPage, type Page, type PageRequest } from '../lib/pages.js';
import { cleanLabel, cleanText } from '../lib/text.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { narrows } from '../tokens/cidrs.js';
import { impliedExpiry, NO_POLICY, type TokenPolicy } from '../tokens/policy.js';
import { armed, derivableError } from '../tokens/derived/parents.js';
import type { DerivationKeys } from '../tokens/derived/keys.js';
import { isFieldError, type MintedToken, mintToken, requestedCidrs, tokenDetails } from '../tokens/service.js';
import type { NewToken } from '../tokens/store.js';
import type { IssueAppTokenBody, RegisterAppBody } from './bodies.js';
import type { App, AppStore } from './store.js';
import type { TokenCounts } from '../observability/metrics/tokens.js';
import type { ActiveTokens } from '../tokens/active-count-store.js';

/** A new app token as its creation answers it: the value (shown once) and what it may do. */
export interface IssuedAppToken {
  readonly value: string;
  readonly tokenId: string;
  readonly createdAt: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string | null;
  readonly allowedCidrs: readonly string[] | null;
}

const issuedFrom = (minted: MintedToken): IssuedAppToken => ({
  value: minted.value,
  tokenId: minted.record.id,
  createdAt: minted.record.createdAt,
  scopes: minted.record.scopes,
  expiresAt: minted.record.expiresAt,
  allowedCidrs: minted.record.allowedCidrs,
});

const sorted = (scopes: readonly string[] | undefined): string[] => [...new Set(scopes ?? [])].sort();

/** The limits a new app token takes from who makes it, or the fields that ask for more. */
type Limits = { readonly allowedCidrs: readonly string[] | null; readonly expiresAt: string | null } | FieldError[];

/**
 * A user token may give an app token whatever the catalogue allows. An API token (`apps:write`)
 * gives nothing it lacks itself (no token widens its own scopes: docs/security.md): only scopes it holds,
 * networks inside its own allow-list (its list when none is asked for), and no later expiry.
 * Otherwise a token limited in scope, network or time could mint an app token free of each.
 */
function limitsFrom(maker: Principal, scopes: readonly string[] | undefined, cidrs: readonly string[] | null, expiresAt: string | null): Limits {
  if (maker.type !== 'api_token') return { allowedCidrs: cidrs, expiresAt };
  const errors: FieldError[] = [];
  if (!(scopes ?? []).every((scope) => maker.scopes.includes(scope))) errors.push({ field: 'scopes', message: 'may only hold scopes of the API token making the request' });
  if (cidrs !== null && !narrows(maker.allowedCidrs, cidrs)) errors.push({ field: 'allowed_cidrs', message: 'must lie inside the networks of the API token making the request' });
  if (errors.length > 0) return errors;
  const makerExpiry = maker.expiresAt === null ? null : iso(maker.expiresAt);
  const earliest = expiresAt === null || (makerExpiry !== null && makerExpiry < expiresAt) ? makerExpiry : expiresAt;
  return { allowedCidrs: cidrs ?? maker.allowedCidrs, expiresAt: earliest };
}

/** Rules for apps and their tokens. */
export class AppService {
  constructor(
    private readonly store: AppStore,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly catalogue: ScopeCatalogue,
    private readonly policy: TokenPolicy = NO_POLICY,
    private readonly caps: OwnershipCaps = DEFAULT_CAPS,
    private readonly counts: TokenCounts | null = null,
    private readonly derivation: DerivationKeys | null = null,
  ) {}

  /** App tokens have no expiry of their own; under a maximum lifetime they get the longest allowed. */
  private expiry(now: number): string | null {
    const at = impliedExpiry(null, now, this.policy);
    return at === null ? null : iso(at);
  }

  /** Registers an app and issues its first app token in one transaction. */
  async register(maker: Principal, input: RegisterAppBody, context: RequestContext): Promise<{ app: App; token: IssuedAppToken }> {
    const userId = maker.user.id;
    const errors: FieldError[] = [];
    const name = cleanLabel(input.name, 'name', 100);
    const description = cleanText(input.description ?? '', 'description', 1000);
    if (typeof name !== 'string') errors.push(name);
    if (typeof description !== 'string') errors.push(description);
    errors.push(...this.catalogue.check('app_token', input.scopes));
    const now = this.clock.now();
    const limits = limitsFrom(maker, input.scopes, null, this.expiry(now));
    if (Array.isArray(limits)) errors.push(...limits);
    if (typeof name !== 'string' || typeof description !== 'string' || Array.isArray(limits) || errors.length > 0) throw validationFailed(errors);

    const createdAt = iso(now);
    const app: App = { id: randomUUID(), userId, name, description, createdAt };
    const fields = { userId, appId: app.id, name, scopes: sorted(input.scopes), createdAt, ...limits };
    const minted = mintToken('app', fields);
    const events = [
      auditEvent({ type: 'app.registered', userId, subject: { type: 'app', id: app.id }, details: { name } }, context, now),
      this.tokenCreated(minted.record, context, now),
    ];
    if (!(await this.store.insertWithToken(app, minted.record, events, this.caps.appsPerUser))) throw capReached('appsPerUser', this.caps.appsPerUser);
    this.counts?.created('app_token', 'api');
    return { app, token: issuedFrom(minted) };
  }

  /** A page of the user's apps, newest first. */
  async list(userId: string, page: PageRequest): Promise<Page<App>> {
    return keysetPage(await this.store.listByUser(userId, page), page);
  }

  /** An app token may read only its own app; any other id is out of its scope. */
  async get(principal: Principal, id: string): Promise<App> {
    if (principal.type === 'app_token' && principal.app?.id !== id) throw insufficientScope('apps:read');
    return this.find(principal.user.id, id);
  }

  /** Deletes the app; every token of the app is revoked with it. */
  async delete(userId: string, id: string, context: RequestContext): Promise<void> {
    const now = this.clock.now();
    const event = auditEvent({ type: 'app.deleted', userId, subject: { type: 'app', id } }, context, now);
    const counts = this.counts;
    const revoked = counts ? (tokens: ActiveTokens) => counts.revoked('app_token', 'app_deleted', tokens.app) : undefined;
    if (!isUuid(id) || !(await this.store.delete(id, userId, iso(now), event, revoked))) throw notFound();
    await this.feed.committed('app', id);
  }

  /** Issues an additional token for the app (rotation: issue, deploy, then revoke the old one). */
  async issueToken(maker: Principal, appId: string, input: IssueAppTokenBody, context: RequestContext): Promise<IssuedAppToken> {
    const userId = maker.user.id;
    const errors = this.catalogue.check('app_token', input.scopes);
    const allowedCidrs = requestedCidrs(input.allowed_cidrs);
    if (isFieldError(allowedCidrs)) errors.push(allowedCidrs);
    const derivable = derivableError(input.derivable, this.derivation);
    if (derivable) errors.push(derivable);
    const now = this.clock.now();
    const limits = isFieldError(allowedCidrs) ? [] : limitsFrom(maker, input.scopes, allowedCidrs, this.expiry(now));
    if (Array.isArray(limits)) errors.push(...limits);
    if (Array.isArray(limits) || errors.length > 0) throw validationFailed(errors);
    const app = await this.find(userId, appId);
    const createdAt = iso(now);
    const fields = { userId, appId: app.id, name: app.name, scopes: sorted(input.scopes), createdAt, ...limits };
    const minted = armed(mintToken('app', fields), input.derivable, this.derivation);
    const inserted = await this.store.insertToken(minted.record, this.tokenCreated(minted.record, context, now), this.caps.tokensPerApp);
    if (inserted === false) throw notFound();
    if (inserted === 'full') throw capReached('tokensPerApp', this.caps.tokensPerApp);
    this.counts?.created('app_token', 'api');
    return issuedFrom(minted);
  }

  private tokenCreated(token: NewToken, context: RequestContext, now: number): AuditEvent {
    const details = { ...tokenDetails(token), scopes: token.scopes };
    return auditEvent({ type: 'token.created', userId: token.userId, subject: { type: 'token', id: token.id }, details }, context, now);
  }

  private async find(userId: string, id: string): Promise<App> {
    const app = isUuid(id) ? await this.store.find(id, userId) : undefined;
    if (!app) throw notFound();
    return app;
  }
}
