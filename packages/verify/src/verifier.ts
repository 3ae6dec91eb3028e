import type { EventSourceMessage } from 'eventsource-parser';
import { CallerCache, RefusalCache } from './cache.js';
import { type Caller, checkScopeNames, holds } from './caller.js';
import { LookupBudgets } from './budget.js';
import { CredentialWatch } from './credential.js';
import { CredentialRefused, VerifyError } from './errors.js';
import { EventFeed } from './events.js';
import { parseAuthorization } from './header.js';
import { invalidationOf } from './invalidation.js';
import { introspect } from './introspect.js';
import { JwtVerifier, looksLikeJwt } from './jwt.js';
import { admits } from './networks.js';
import { isOpaqueToken } from './opaque.js';
import type { Settings } from './options.js';
import { type AuthRequirement, authRefusal, checkAuthRequirement } from './step-up.js';

/** What the framework adapters need of a verifier. */
export interface VerifierCore {
  /**
   * The caller of an `Authorization` value, sent from `clientAddress` (the address of this
   * service's caller, as the service's own rate limits see it); rejects with a {@link VerifyError}.
   * A token limited to networks is refused unless the address is given and inside one of them.
   */
  verify(authorization: string | readonly string[] | undefined, clientAddress?: string): Promise<Caller>;
  /** Throws a 403 insufficient_scope {@link VerifyError} naming `scopes` unless the caller holds each. */
  requireScopes(caller: Caller, ...scopes: string[]): void;
  /**
   * Throws unless `caller` is a user whose login meets `requirement` (contract §12.5): a 401
   * insufficient_user_authentication challenge (RFC 9470) for a user token too old or without a
   * second factor, a 403 insufficient_scope for an API or app token.
   */
  requireAuth(caller: Caller, requirement?: AuthRequirement): void;
  /** Whether the event stream is up: only then are answers cached. */
  readonly streaming: boolean;
  /** Answers held in the cache now. */
  readonly cacheSize: number;
  /** Ends the event stream and its timers; verify() still works after, without a cache. */
  close(): Promise<void>;
}

/** Inactive answers kept at once, and for how long. */
const REFUSALS_KEPT = 1000;
const REFUSAL_TTL_MS = 60_000;

/**
 * The engine: answers from the cache while the event stream keeps it correct, else from rz-auth.
 * `generation` moves on every event and every change of the stream's state; an answer fetched
 * across such a move is returned but not cached, since the event may concern it.
 */
export class Engine implements VerifierCore {
  private readonly cache: CallerCache;
  private readonly refusals = new RefusalCache(REFUSALS_KEPT, REFUSAL_TTL_MS);
  /** Lookups under way, by token: requests with the same uncached token wait for one introspection. */
  private readonly lookups = new Map<string, { readonly answer: Promise<Caller>; readonly generation: number; readonly keySet: number }>();
  private readonly jwt: JwtVerifier;
  private readonly feed: EventFeed;
  private readonly credential: CredentialWatch;
  private readonly budgets: LookupBudgets;
  private generation = 0;
  /** Moves when a key set fetched after keys.changed comes into use: refusals made on the old one are not kept. */
  private keySet = 0;

  constructor(private readonly settings: Settings) {
    const { url, fetch, timeoutMs } = settings;
    this.cache = new CallerCache(settings.cacheMaxEntries, settings.cacheMaxAgeMs);
    this.credential = new CredentialWatch(settings.logger);
    this.budgets = new LookupBudgets(settings.lookupsPerAddress, settings.firstSeenLookups, settings.cacheMaxEntries);
    this.jwt = new JwtVerifier(url, { issuer: settings.issuer, audience: settings.audience, cooldownMs: settings.jwksCooldownMs, timeoutMs, fetch });
    this.feed = new EventFeed({
      base: url,
      serviceToken: settings.serviceToken,
      fetch,
      idleTimeoutMs: settings.streamIdleTimeoutMs,
      minDelayMs: settings.reconnectMinMs,
      maxDelayMs: settings.reconnectMaxMs,
      onEvent: (message, committedAt) => this.onEvent(message, committedAt),
      onState: (up) => {
        if (up) this.credential.accepted();
        settings.metrics?.stream(up);
        this.forgetAll();
      },
      onError: (error) => {
        try {
          settings.onStreamError?.(error instanceof CredentialRefused ? this.failure(error) : error);
        } catch {
          // A throwing callback (a logger not ready) must not stop the stream or end the process.
        }
      },
    });
  }

  get streaming(): boolean {
    return this.feed.connected;
  }

  get cacheSize(): number {
    return this.cache.size;
  }

  async verify(authorization: string | readonly string[] | undefined, clientAddress?: string): Promise<Caller> {
    const { metrics } = this.settings;
    if (metrics === null) return this.check(authorization, clientAddress);
    try {
      const caller = await this.check(authorization, clientAddress);
      metrics.request('ok');
      return caller;
    } catch (error) {
      // Anything but a refusal means the token could not be checked (verify() never decides scopes nor step-up).
      const { code } = error instanceof VerifyError ? error : { code: 'unavailable' as const };
      metrics.request(code === 'insufficient_scope' || code === 'insufficient_user_authentication' ? 'unavailable' : code);
      throw error;
    }
  }

  private async check(authorization: string | readonly string[] | undefined, clientAddress: string | undefined): Promise<Caller> {
    const parsed = parseAuthorization(authorization);
    if (!parsed.ok) throw this.error(parsed.code);
    const { token } = parsed;
    const known = this.feed.connected ? this.cache.get(token, Date.now()) : undefined;
    const refused = known === 'revoked' || (this.feed.connected && this.refusals.has(token, Date.now()));
    if (known !== undefined || refused) this.settings.metrics?.cacheHit();
    if (refused) throw this.error('invalid_token');
    const caller = known ?? (await this.sharedLookUp(token, clientAddress));
    // Every request, cached answers too: the list is about this request's address.
    if (!admits(caller, clientAddress)) throw this.error('invalid_token');
    return caller;
  }

  requireScopes(caller: Caller, ...scopes: string[]): void {
    if (scopes.every((scope) => holds(caller, scope))) return;
    checkScopeNames(scopes);
    throw new VerifyError('insufficient_scope', this.settings.realm, { scopes });
  }

  requireAuth(caller: Caller, requirement: AuthRequirement = {}): void {
    checkAuthRequirement(requirement, 'requireAuth');
    const refusal = authRefusal(caller, requirement, this.settings.realm, Date.now());
    if (refusal !== null) throw refusal;
  }

  async close(): Promise<void> {
    await this.feed.close();
    this.forgetAll();
  }

  /**
   * One lookup per token at a time, its answer cached (an inactive one as a refusal) unless an
   * event or a change of the stream's state came between its start and its end. A request never
   * joins a lookup started before the last event: that event may be the token's revocation.
   */
  private async sharedLookUp(token: string, address: string | undefined): Promise<Caller> {
    let lookup = this.lookups.get(token);
    if (lookup?.generation !== this.generation) {
      const started = { answer: this.lookUp(token, address), generation: this.generation, keySet: this.keySet };
      const done = () => void (this.lookups.get(token) === started && this.lookups.delete(token));
      started.answer.then(done, done);
      this.lookups.set(token, (lookup = started));
    }
    const cacheable = () => this.feed.connected && lookup.generation === this.generation;
    try {
      const caller = await lookup.answer;
      if (cacheable()) this.cache.set(token, caller, Date.now());
      return caller;
    } catch (error) {
      if (error instanceof VerifyError && error.code === 'invalid_token' && cacheable() && lookup.keySet === this.keySet) this.refusals.add(token, Date.now());
      throw error;
    }
  }

  /**
   * A user token is verified offline first (a forged or expired one never costs a request), then
   * its session is checked by introspection: a logout before this service heard of the token
   * came through no event it saw. Opaque tokens with a valid checksum are introspected.
   */
  private async lookUp(token: string, address: string | undefined): Promise<Caller> {
    if (looksLikeJwt(token)) {
      const check = await this.jwt.verify(token);
      if ('unavailable' in check) throw this.failure(check.unavailable);
      if (!check.valid) throw this.error('invalid_token');
      const caller = await this.introspected(token, address);
      if (caller.tokenType !== 'user' || caller.userId !== check.claims.sub || caller.tokenId !== check.claims.sid) throw this.error('invalid_token');
      // Cached until expiresAt: never past the JWT's own signed expiry, whatever the answer says.
      const { exp, amr, authTime } = check.claims;
      const expiresAt = new Date(Math.min(caller.expiresAt?.getTime() ?? Infinity, exp * 1000));
      // How the user logged in, from the signed token itself (a later reauth is another token).
      return Object.freeze({ ...caller, expiresAt, amr, authTime: new Date(authTime * 1000) });
    }
    if (isOpaqueToken(token)) {
      const caller = await this.introspected(token, address);
      if (caller.tokenType === 'user') throw this.error('invalid_token');
      return caller;
    }
    throw this.error('invalid_token');
  }

  /** The caller rz-auth's introspection vouches for, the lookup charged to `address` first. */
  private async introspected(token: string, address: string | undefined): Promise<Caller> {
    const { url, serviceToken, timeoutMs, fetch, realm } = this.settings;
    const wait = this.budgets.charge(token, address, Date.now());
    if (wait > 0) throw new VerifyError('rate_limited', realm, { retryAfter: wait });
    const timed = this.settings.metrics?.introspecting();
    const answer = await introspect(fetch, url, serviceToken, token, timeoutMs);
    timed?.();
    if ('unavailable' in answer) throw this.failure(answer.unavailable);
    this.credential.accepted();
    if (!answer.active) throw this.error('invalid_token');
    // Active but expired is a no: taking it even once would serve an expired token.
    if ((answer.caller.expiresAt?.getTime() ?? Infinity) <= Date.now()) throw this.error('invalid_token');
    this.budgets.seen(token);
    return answer.caller;
  }

  private onEvent(message: EventSourceMessage, committedAt: number | undefined): void {
    const what = invalidationOf(message);
    this.generation++;
    this.cache.apply(what);
    // From here on the token is refused: a revocation has reached this service.
    if (what.revoke && committedAt !== undefined) this.settings.metrics?.revoked(committedAt);
    if (message.event === 'keys.changed' || message.event === 'reset') {
      // A user token signed with a key not yet fetched was refused for it: it may be good now. Until
      // the new key set is read, lookups still run on the old one: their refusals are forgotten
      // too once it is in use (a lookup that started before that is not kept as a refusal).
      this.refusals.clear();
      void this.jwt.reload().then(() => {
        this.keySet++;
        this.refusals.clear();
      });
    }
  }

  /** The stream came up or went down: nothing cached before can be vouched for. */
  private forgetAll(): void {
    this.generation++;
    this.cache.apply({ kind: 'all', revoke: false });
    this.refusals.clear();
  }

  /** No answer from rz-auth: unreachable, or refusing this service's own credential (logged once). */
  private failure(cause: unknown): VerifyError {
    if (!(cause instanceof CredentialRefused)) return this.error('unavailable', cause);
    this.credential.refusedBy(cause);
    return this.error('service_credential_refused', cause);
  }

  private error(code: VerifyError['code'], cause?: unknown): VerifyError {
    return new VerifyError(code, this.settings.realm, cause === undefined ? {} : { cause });
  }
}

