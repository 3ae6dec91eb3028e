import type { RefusalRecorder } from '../audit/refusals.js';
import type { FeedEvent } from '../changes/feed.js';
import type { Clock } from '../clock.js';
import { invalidToken } from '../errors.js';
import { BoundedMap } from '../lib/bounded-map.js';
import type { LastUseRecorder } from '../lib/last-use.js';
import type { ServiceCredentialStore } from '../service-credentials/store.js';
import type { SessionStore } from '../account/session-store.js';
import { type OpaqueKind, tokenKind } from '../lib/token-format.js';
import type { TokenStore } from '../tokens/store.js';
import type { UsageRecorder } from '../tokens/usage.js';
import type { UserStore } from '../account/user-store.js';
import { acceptSession, type CachedSession, type JwtEntry, jwtKey, toCachedSession } from './jwt-cache.js';
import type { UserTokens } from './jwt.js';
import { findOpaque, type OpaqueEntry } from './opaque.js';
import type { Caller, CredentialType, Principal } from './principal.js';
import { type DerivedAuthenticator, RZ_AUTH_AUDIENCE } from '../tokens/derived/authenticate.js';

const CACHE_SIZE = 50_000;

/** Refusals by a token's allow-list, with the refused token's type: the client sees invalid_token like any other. */
const networkRefusals = new WeakMap<object, CredentialType>();

/** The type of the token `error` refused for its allow-list (metrics tell these refusals apart); undefined otherwise. */
export const networkRefusal = (error: unknown): CredentialType | undefined => (typeof error === 'object' && error !== null ? networkRefusals.get(error) : undefined);

export interface AuthenticatorDeps {
  readonly tokens: TokenStore;
  readonly services: ServiceCredentialStore;
  readonly sessions: SessionStore;
  readonly users: UserStore;
  readonly userTokens: UserTokens;
  readonly usage: UsageRecorder;
  /** When each session was last used (GET /api/auth/sessions), coalesced like tokens' last use. */
  readonly sessionUsage: LastUseRecorder;
  readonly clock: Clock;
  /** Where refusals by a token's allow-list are counted for the audit log; a cache test needs none. */
  readonly refusals?: RefusalRecorder;
  /** Entries per cache (default 50,000); a test makes it small to reach eviction. */
  readonly cacheSize?: number;
  /** Checks `rzd_` children (contract §14); without it every child is invalid. */
  readonly derived?: DerivedAuthenticator;
}

/**
 * Turns a bearer token into its {@link Caller}: a user's principal, or a platform service. Every
 * route, and introspection, authenticates through the process's one instance. Verified JWTs,
 * sessions and token lookups are cached in process; every change that could make a cached answer
 * wrong (revocation, logout, deletion, key rotation) reaches {@link forget} before the next request
 * is authenticated, locally at once and from other processes through the change feed.
 */
export class Authenticator {
  /** Verified JWTs by {@link jwtKey}; read them through {@link verifiedJwt}. */
  private readonly jwts: BoundedMap<string, JwtEntry>;
  private readonly sessions: BoundedMap<string, CachedSession | null>;
  /**
   * Opaque tokens the store vouched for, by their exact value: the store is searched by SHA-256
   * digest, and a cache hit needs none. Only well-formed tokens found in the store are ever added.
   */
  private readonly tokens: BoundedMap<string, OpaqueEntry>;
  /** The value of each cached token by token id, for {@link forget}; follows `tokens` on eviction. */
  private readonly tokenValues = new Map<string, string>();
  /**
   * Bumped by every forget. A lookup that started before a change must not cache what it read,
   * or a token revoked while it was being looked up would come back from the cache.
   */
  private generation = 0;
  /** Lookups under way, by token: requests that arrive meanwhile share one (same generation only). */
  private readonly inFlight = new Map<string, { readonly generation: number; readonly promise: Promise<unknown> }>();

  constructor(private readonly deps: AuthenticatorDeps) {
    const size = deps.cacheSize ?? CACHE_SIZE;
    this.jwts = new BoundedMap(size);
    this.sessions = new BoundedMap(size);
    this.tokens = new BoundedMap(size, (_value, entry) => this.tokenValues.delete(entry.caller.credentialId));
  }

  /**
   * The caller of a bearer token presented from `address` (the client address as the rate limiter
   * sees it; null where no client is known: introspection, which a platform service asks on its
   * caller's behalf): at once when the caches decide, otherwise after a lookup.
   * @throws ProblemError invalid_token (or rejects with it), identical for every reason.
   */
  authenticate(token: string, address: string | null, audience = RZ_AUTH_AUDIENCE): Promise<Caller> | Caller {
    if (token.startsWith('eyJ')) return this.authenticateJwt(token);
    if (token.startsWith('rzd_')) return this.deps.derived ? this.deps.derived.authenticate(token, address, audience) : Promise.reject(invalidToken());
    return this.authenticateOpaque(token, address);
  }

  /** A route needed `scope` and the API or app token `principal` carried it: its use is recorded. */
  exercised(principal: Principal, scope: string): void {
    if (principal.type !== 'user') this.deps.usage.recordScope(principal.credentialId, scope, this.deps.clock.now());
  }

  /** Drops whatever a change makes stale. */
  forget(change: FeedEvent): void {
    this.generation++;
    switch (change.kind) {
      case 'token':
      case 'service': {
        const value = this.tokenValues.get(change.ref);
        if (value !== undefined) this.tokens.delete(value);
        this.tokenValues.delete(change.ref);
        break;
      }
      case 'session':
        this.sessions.delete(change.ref);
        break;
      default:
        // Apps, users and keys change rarely, and a reset means we lost track: start over.
        this.jwts.clear();
        this.sessions.clear();
        this.tokens.clear();
        this.tokenValues.clear();
    }
  }

  private authenticateOpaque(token: string, address: string | null): Promise<Caller> | Caller {
    // Only well-formed tokens are ever cached, so a hit needs no shape or checksum check.
    const cached = this.tokens.get(token);
    if (cached) return this.accept(cached, address);
    // Shape and checksum first: strings that are not our tokens never reach the store.
    const kind = tokenKind(token);
    if (kind === null) throw invalidToken();
    return this.shared(token, () => this.lookupToken(token, kind)).then((entry) => this.accept(entry, address));
  }

  /** One lookup per token at a time: a request that arrives while one runs waits for it. */
  private shared<T>(token: string, lookup: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(token);
    if (running?.generation === this.generation) return running.promise as Promise<T>;
    const promise = lookup().finally(() => {
      if (this.inFlight.get(token)?.promise === promise) this.inFlight.delete(token);
    });
    this.inFlight.set(token, { generation: this.generation, promise });
    return promise;
  }

  /** The store's entry for a token, cached unless a change arrived while it was read. */
  private async lookupToken(token: string, kind: OpaqueKind): Promise<OpaqueEntry> {
    const generation = this.generation;
    const entry = await findOpaque(this.deps, token, kind);
    if (!entry) throw invalidToken();
    if (generation === this.generation) {
      this.tokens.set(token, entry);
      this.tokenValues.set(entry.caller.credentialId, token);
    }
    return entry;
  }

  /**
   * Every request's checks, on a cached entry or a fresh one: revocation, expiry (a rotated token's
   * grace ends by time alone, on every instance, with no change to announce), and the allow-list.
   */
  private accept({ caller, revoked, allowed, label }: OpaqueEntry, address: string | null): Caller {
    if (revoked) throw invalidToken();
    if (caller.type === 'service') return caller;
    const now = this.deps.clock.now();
    if (caller.expiresAt !== null && caller.expiresAt <= now) throw invalidToken();
    // A token without an allow-list pays this null check only. Without a client address
    // (introspection) the list cannot be applied here: the answer carries it to the platform
    // service, which applies it to its own caller's address (packages/verify).
    if (allowed !== null && address !== null && !allowed.admits(address)) {
      if (label) this.deps.refusals?.note({ type: caller.type, tokenId: caller.credentialId, userId: caller.user.id, ...label }, address, now);
      const refusal = invalidToken();
      networkRefusals.set(refusal, caller.type);
      throw refusal;
    }
    this.deps.usage.record(caller.credentialId, now, address);
    return caller;
  }

  private authenticateJwt(token: string): Promise<Principal> | Principal {
    const now = this.deps.clock.now();
    const entry = this.verifiedJwt(token);
    if (!entry) return this.shared(token, () => this.verifyAndAccept(token, now));
    if (entry.expiresAt <= now) throw invalidToken();
    const session = this.sessions.get(entry.sessionId);
    if (session !== undefined) return this.acceptSession(entry, session, now);
    return this.lookupSession(entry.sessionId).then((found) => this.acceptSession(entry, found, now));
  }

  private async verifyAndAccept(token: string, now: number): Promise<Principal> {
    const entry = await this.verifyJwt(token, now);
    if (entry.expiresAt <= now) throw invalidToken();
    const session = this.sessions.get(entry.sessionId) ?? (await this.lookupSession(entry.sessionId));
    return this.acceptSession(entry, session, now);
  }

  private acceptSession(entry: JwtEntry, session: CachedSession | null | undefined, now: number): Principal {
    const principal = acceptSession(entry, session, now);
    this.deps.sessionUsage.record(entry.sessionId, now);
    return principal;
  }

  /** The cache's entry for exactly `token`, if it was verified. */
  private verifiedJwt(token: string): JwtEntry | undefined {
    const entry = this.jwts.get(jwtKey(token));
    return entry?.token === token ? entry : undefined;
  }

  private async verifyJwt(token: string, now: number): Promise<JwtEntry> {
    const generation = this.generation;
    const claims = await this.deps.userTokens.verify(token, now);
    if (!claims) throw invalidToken();
    const user = await this.deps.users.findById(claims.sub);
    if (!user) throw invalidToken();
    const entry: JwtEntry = {
      token,
      sessionId: claims.sid,
      expiresAt: claims.validUntil,
      principal: {
        type: 'user',
        user: { id: user.id, username: user.username, email: user.email, emailVerified: user.emailVerifiedAt !== null },
        credentialId: claims.sid,
        scopes: ['*'],
        issuedAt: claims.iat * 1000,
        // When it stops working: its exp, or sooner the end of its signing key's retirement, so
        // introspection never tells a service to cache the token past the moment rz-auth refuses it.
        expiresAt: claims.validUntil,
        app: null,
        allowedCidrs: null,
        auth: { amr: claims.amr, authTime: claims.authTime * 1000 },
        ...(claims.enrollOnly ? { enrollOnly: true as const } : {}),
      },
    };
    if (generation === this.generation) this.jwts.set(jwtKey(token), entry);
    return entry;
  }

  private async lookupSession(id: string): Promise<CachedSession | null> {
    const generation = this.generation;
    const found = await this.deps.sessions.findById(id);
    const session = found ? toCachedSession(found) : null;
    // Only a revoked or missing session is final; an active one is cached too, and forget() drops it.
    if (generation === this.generation) this.sessions.set(id, session);
    return session;
  }
}
