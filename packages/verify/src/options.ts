import { QUOTABLE } from './errors.js';
import type { Fetch } from './bounded.js';
import type { LookupBudget } from './budget.js';
import type { Logger } from './credential.js';
import { type MetricsRegistry, VerifyMetrics } from './metrics.js';

export interface VerifierOptions {
  /** rz-auth's base URL, e.g. `https://auth.example.com` (no trailing path). */
  readonly url: string;
  /** This service's credential, `rzs_…`, from `rz-auth services create`. */
  readonly serviceToken: string;
  /** The realm of the `WWW-Authenticate` challenges. Default `rz`. */
  readonly realm?: string;
  /** The `iss` and `aud` rz-auth puts in user tokens (its JWT_ISSUER, JWT_AUDIENCE). Defaults `rz-auth`, `rz-api`. */
  readonly issuer?: string;
  readonly audience?: string;
  /** Most answers kept. Default 10000. */
  readonly cacheMaxEntries?: number;
  /** Longest an answer is kept, however long the token lives. Default 10 minutes. */
  readonly cacheMaxAgeMs?: number;
  /** Per request to rz-auth (introspection, JWKS). Default 5000. */
  readonly timeoutMs?: number;
  /** Least time between two JWKS fetches caused by an unknown key id. Default 30000. */
  readonly jwksCooldownMs?: number;
  /**
   * Silence after which the event stream counts as dead and is reopened. Default 45000 (rz-auth
   * sends a comment at least every 15 s); shorter when rz-auth states its heartbeat interval.
   */
  readonly streamIdleTimeoutMs?: number;
  /** Backoff between reconnections of the event stream. Defaults 250 and 10000. */
  readonly reconnectMinMs?: number;
  readonly reconnectMaxMs?: number;
  /** For every request to rz-auth. Default `globalThis.fetch`. */
  readonly fetch?: Fetch;
  /** Told of each failure of the event stream (while it is down, nothing is cached). */
  readonly onStreamError?: (error: unknown) => void;
  /**
   * Lookups (introspections of tokens not in the cache) one client address may cause, its IPv6 /64
   * counting as one: a bucket of `burst`, refilled at `perSecond`; past it, 429 rate_limited.
   * Applies whenever verify() is given the client's address, as the Fastify plugin and the
   * middleware always do. Default `{ burst: 100, perSecond: 10 }`; `false` for none.
   */
  readonly lookupsPerAddress?: LookupBudget | false;
  /**
   * Lookups of tokens this verifier has never seen active, from every client together: part of the
   * credential's RATE_LIMIT_SERVICE at rz-auth, so new tokens cannot spend what known callers need.
   * Default `{ burst: 200, perSecond: 100 }`; `false` for none.
   */
  readonly firstSeenLookups?: LookupBudget | false;
  /** Told, once until it is accepted again, that rz-auth refuses this service's credential. Default `console`. */
  readonly logger?: Logger;
  /**
   * A prom-client `Registry` to register the `rz_verify_*` series in (README, "Metrics"); needs
   * prom-client installed. Without it, nothing is counted.
   */
  readonly metrics?: MetricsRegistry;
}

export type Settings = Required<Omit<VerifierOptions, 'onStreamError' | 'metrics'>> &
  Pick<VerifierOptions, 'onStreamError'> & { readonly metrics: VerifyMetrics | null };

const SERVICE_TOKEN = /^rzs_[0-9A-Za-z]{49}$/;

/** The longest delay a Node timer keeps: past it, Node fires after 1 ms instead. */
const MAX_MS = 2 ** 31 - 1;

function positive(name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen <= 0 || chosen > max) throw new TypeError(`createVerifier: ${name} must be a positive integer up to ${max}`);
  return chosen;
}

/** A duration in milliseconds, at most {@link MAX_MS}. */
const duration = (name: string, value: number | undefined, fallback: number): number => positive(name, value, fallback, MAX_MS);

function optionalFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`createVerifier: ${name} must be a function`);
  return value;
}

function budgetOf(name: string, value: LookupBudget | false | undefined, fallback: LookupBudget): LookupBudget | false {
  if (value === false) return false;
  if (value === undefined) return fallback;
  const { burst, perSecond } = value;
  if (!Number.isSafeInteger(burst) || burst < 1 || typeof perSecond !== 'number' || !(perSecond > 0) || perSecond > 1e6) {
    throw new TypeError(`createVerifier: ${name} must be false or { burst: a positive integer, perSecond: a positive number }`);
  }
  return Object.freeze({ burst, perSecond });
}

function loggerOf(logger: Logger | undefined): Logger {
  if (logger === undefined) return console;
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function') throw new TypeError('createVerifier: logger must have an error(message) method');
  return logger;
}

/** The options with their defaults, checked once: a bad one throws naming it. */
export function settingsOf(options: VerifierOptions): Settings {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new TypeError('createVerifier: url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('createVerifier: url must be an absolute http(s) URL');
  if (typeof options.serviceToken !== 'string' || !SERVICE_TOKEN.test(options.serviceToken)) {
    throw new TypeError('createVerifier: serviceToken must be a service credential (rzs_…) from `rz-auth services create`');
  }
  const realm = options.realm ?? 'rz';
  if (!QUOTABLE.test(realm)) throw new TypeError('createVerifier: realm must be 1 to 100 printable characters without " or \\');
  return {
    url: url.href.replace(/\/+$/, ''),
    serviceToken: options.serviceToken,
    realm,
    issuer: options.issuer ?? 'rz-auth',
    audience: options.audience ?? 'rz-api',
    cacheMaxEntries: positive('cacheMaxEntries', options.cacheMaxEntries, 10_000),
    cacheMaxAgeMs: duration('cacheMaxAgeMs', options.cacheMaxAgeMs, 600_000),
    timeoutMs: duration('timeoutMs', options.timeoutMs, 5000),
    jwksCooldownMs: duration('jwksCooldownMs', options.jwksCooldownMs, 30_000),
    streamIdleTimeoutMs: duration('streamIdleTimeoutMs', options.streamIdleTimeoutMs, 45_000),
    reconnectMinMs: duration('reconnectMinMs', options.reconnectMinMs, 250),
    reconnectMaxMs: duration('reconnectMaxMs', options.reconnectMaxMs, 10_000),
    fetch: optionalFunction('fetch', options.fetch) ?? globalThis.fetch,
    onStreamError: optionalFunction('onStreamError', options.onStreamError),
    logger: loggerOf(options.logger),
    lookupsPerAddress: budgetOf('lookupsPerAddress', options.lookupsPerAddress, { burst: 100, perSecond: 10 }),
    firstSeenLookups: budgetOf('firstSeenLookups', options.firstSeenLookups, { burst: 200, perSecond: 100 }),
    // Last: it registers series, which a bad option before it must not leave behind.
    metrics: VerifyMetrics.of(options.metrics),
  };
}
