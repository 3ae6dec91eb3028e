import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { MAX_QUOTA, MAX_WINDOW_SECONDS, POLICIES, POLICY_NAMES, type Quota, type RateLimitConfig } from './ratelimit/policies.js';
import { MAX_TTL_SECONDS } from './auth/jwt.js';
import { DAY_MS } from './clock.js';
import type { TokenPolicy } from './tokens/policy.js';
import { type PlatformScope, readScopesFile, ScopesFileError } from './scopes/file.js';
import { checkHopsOnWildcard, HOPS_CONFIRMED, parseTrustProxy, type TrustProxy } from './trust-proxy.js';
import { parseCorsOrigins } from './lib/origins.js';
import { type SealingKeys, sealingKeysFrom } from './lib/sealed.js';
import { capsFrom, type OwnershipCaps } from './lib/caps.js';
import { parseKeysUrl } from './lib/leak-keys-url.js';
import { type MetricsConfig, metricsFrom } from './observability/metrics/config.js';
import { mailFrom, type MailSettings } from './mail/config.js';
import { type AccountEmailConfig, accountEmailFrom } from './account/email-config.js';
import { type MfaConfig, mfaFrom } from './account/mfa/config.js';
import { type DeviceFlowConfig, deviceFlowFrom } from './oauth/config.js';
import { type DerivedConfig, derivedFrom } from './tokens/derived/config.js';
import { bool, ConfigError, type Env, int, oneOf, optionalInt, raw } from './lib/env-vars.js';
import { deepFreeze } from './lib/freeze.js';

export { ConfigError };

/** Levels accepted by pino, plus `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string; readonly synchronous: 'NORMAL' | 'FULL'; readonly cacheKiB: number }
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number };

export interface Argon2Params {
  readonly memoryKiB: number;
  readonly timeCost: number;
  readonly parallelism: number;
}

/** The whole runtime configuration, parsed once at start-up and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly redisUrl: string | null;
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  readonly logLevel: LogLevel;
  readonly jwt: { readonly ttlSeconds: number; readonly issuer: string; readonly audience: string };
  readonly passwords: {
    readonly minLength: number;
    readonly argon2: Argon2Params;
    readonly hashConcurrency: number;
    readonly hashQueueLimit: number;
  };
  readonly signupEnabled: boolean;
  readonly usageFlushMs: number;
  /** The change log: how often each instance reads it for changes nobody announced, and how long entries are kept. */
  readonly changes: { readonly pollMs: number; readonly retentionMs: number };
  readonly rateLimits: RateLimitConfig;
  /** Which proxies may set X-Forwarded-For (TRUST_PROXY). */
  readonly trustProxy: TrustProxy;
  /** Server processes on this machine (`serve --workers`); 1 means no cluster. */
  readonly workers: number;
  /** How long a graceful shutdown may wait for in-flight requests. */
  readonly shutdownTimeoutMs: number;
  /** The platform's own scopes, from `SCOPES_FILE`; none when it is unset. */
  readonly scopes: readonly PlatformScope[];
  /** How long audit events are kept (AUDIT_RETENTION_DAYS); the maintenance sweep deletes older ones. */
  readonly auditRetentionMs: number;
  /** The operator's token lifetime rules (TOKEN_MAX_LIFETIME_DAYS, TOKEN_IDLE_REVOKE_DAYS). */
  readonly tokens: TokenPolicy;
  /** GET /api/events: the heartbeat's interval, and how many streams one service credential may hold open here. */
  readonly events: { readonly heartbeatMs: number; readonly maxStreamsPerCredential: number };
  /**
   * Webhook sending: whether endpoints may target loopback, private and link-local addresses
   * (WEBHOOK_ALLOW_PRIVATE, development and tests only), and how long one attempt may take.
   */
  readonly webhooks: { readonly allowPrivate: boolean; readonly timeoutMs: number; readonly connectTimeoutMs: number };
  /** Leak reports: where GitHub's secret scanning keys are fetched (LEAK_GITHUB_KEYS_URL). */
  readonly leaks: { readonly githubKeysUrl: string };
  /** The operator's keys that encrypt secrets at rest (KEY_ENCRYPTION_KEY, KEY_ENCRYPTION_KEY_OLD). */
  readonly keyEncryption: SealingKeys;
  /** The platform's front-ends that may call the API from a browser (CORS_ORIGINS); none by default. */
  readonly corsOrigins: readonly string[];
  /** What one user may own (MAX_API_TOKENS_PER_USER, MAX_APPS_PER_USER, MAX_TOKENS_PER_APP, MAX_WEBHOOKS_PER_USER). */
  readonly caps: OwnershipCaps;
  readonly metrics: MetricsConfig | null; // METRICS_ADDR, METRICS_TOKEN; null when metrics are off
  readonly mail: MailSettings | null; // SMTP_URL, MAIL_FROM, PUBLIC_URL (docs/email.md); null when mail is off
  readonly accountEmail: AccountEmailConfig; // EMAIL_VERIFICATION_REQUIRED, RESET_TOKEN_TTL_S, VERIFY_TOKEN_TTL_S
  readonly mfa: MfaConfig; // second factors, passkeys, step-up (MFA_ENCRYPTION_KEY, WEBAUTHN_*, REAUTH_MAX_AGE_S, ...)
  readonly device: DeviceFlowConfig; // CLI login by device authorization (PUBLIC_URL, DEVICE_*; docs/device-flow.md)
  readonly derived: DerivedConfig; // derived tokens (DERIVE_KEK, DERIVE_KEK_OLD, DERIVED_MAX_TTL_S)
}

function parseQuota(env: Env, name: string, fallback: string): Quota | null {
  const value = (raw(env, name) ?? fallback).toLowerCase();
  if (value === 'off') return null;
  const match = /^(\d+)\s*\/\s*(\d+)$/.exec(value);
  const quota = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || quota < 1 || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS || quota > MAX_QUOTA) {
    throw new ConfigError(`${name} must be <requests>/<seconds> (e.g. 100/60, window up to ${MAX_WINDOW_SECONDS}) or off, got "${value}"`);
  }
  return { quota, windowSeconds };
}

function parseRateLimits(env: Env): RateLimitConfig {
  // A misspelt limit would leave the default in force without a word.
  const known = new Set<string>(POLICY_NAMES.map((name) => POLICIES[name].env));
  const unknown = Object.keys(env).find((name) => name.startsWith('RATE_LIMIT_') && !known.has(name));
  if (unknown !== undefined) throw new ConfigError(`${unknown} is not a rate limit; the limits are ${[...known].join(', ')}`);
  const allOff = !bool(env, 'RATE_LIMITS', true);
  const entries = POLICY_NAMES.map((name) => {
    const { env: variable, fallback } = POLICIES[name];
    return [name, allOff ? null : parseQuota(env, variable, fallback)] as const;
  });
  return Object.fromEntries(entries) as Record<(typeof POLICY_NAMES)[number], Quota | null>;
}

/** A worker count: a number from 1 to 256, or `auto` for one per core. */
export function parseWorkers(value: string | undefined, name: string): number {
  if (value === undefined) return 1;
  if (value.toLowerCase() === 'auto') return availableParallelism();
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256) {
    throw new ConfigError(`${name} must be a number of processes from 1 to 256, or auto, got "${value}"`);
  }
  return Number(value);
}

/** DATABASE_URL (and the settings of its kind) from the environment. */
export function parseDatabase(env: Env): DatabaseConfig {
  const url = raw(env, 'DATABASE_URL') ?? 'sqlite:./data/rz-auth.db';
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new ConfigError('DATABASE_URL must name a file, e.g. sqlite:./data/rz-auth.db');
    const synchronous = oneOf(env, 'SQLITE_SYNCHRONOUS', ['NORMAL', 'FULL'] as const, 'NORMAL');
    // SQLite's own default page cache (2 MiB), not better-sqlite3's 16 MiB: the hot reads are served
    // from the service's caches, and pages SQLite does not keep are still in the kernel's page cache.
    const cacheKiB = int(env, 'SQLITE_CACHE_KIB', 2048, 64, 1024 * 1024);
    return { kind: 'sqlite', path, synchronous, cacheKiB };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Never shown back: it may hold a password.
    if (!URL.canParse(url)) throw new ConfigError('DATABASE_URL is not a valid URL (postgres://user:password@host:port/database)');
    return { kind: 'postgres', url, poolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000) };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
}

/** The platform scopes declared in the file named by SCOPES_FILE, read and checked once at start. */
function parseScopes(env: Env): PlatformScope[] {
  const path = raw(env, 'SCOPES_FILE');
  if (path === undefined) return [];
  try {
    return readScopesFile(path);
  } catch (error) {
    if (error instanceof ScopesFileError) throw new ConfigError(`SCOPES_FILE ${path}: ${error.message}`);
    throw error;
  }
}

/** An IP address (an IPv6 one with or without brackets) or a host name, as listen() takes it. */
function parseHost(env: Env): string {
  const host = raw(env, 'HOST') ?? '127.0.0.1';
  const bracketed = /^\[(.*)\]$/.exec(host)?.[1];
  if (bracketed !== undefined && isIP(bracketed) === 6) return bracketed;
  if (isIP(host) === 0 && !/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(host)) {
    throw new ConfigError('HOST must be an IP address or a host name, e.g. 127.0.0.1, ::1 or 0.0.0.0');
  }
  return host;
}

function parseRedisUrl(env: Env): string | null {
  const url = raw(env, 'REDIS_URL');
  if (url === undefined) return null;
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  if (!URL.canParse(url)) throw new ConfigError('REDIS_URL is not a valid URL (redis://:password@host:port/database)');
  // The path names the database; ioredis would send SELECT NaN for anything but digits.
  const { pathname: path } = new URL(url);
  if (!/^(?:\/(?:[0-9]{1,5})?)?$/.test(path)) throw new ConfigError('REDIS_URL must end with the host, or with /<database number> after it');
  return url;
}

/**
 * Parses the environment into a frozen {@link Config}.
 * @throws ConfigError naming the first invalid variable.
 */
export function loadConfig(env: Env): Config {
  const [cores, port, host] = [availableParallelism(), int(env, 'PORT', 3000, 0, 65535), parseHost(env)];
  const config: Config = {
    port,
    host,
    database: parseDatabase(env),
    redisUrl: parseRedisUrl(env),
    redisPrefix: raw(env, 'REDIS_PREFIX') ?? 'rz:',
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    jwt: {
      ttlSeconds: int(env, 'JWT_TTL_SECONDS', 3600, 60, MAX_TTL_SECONDS),
      issuer: raw(env, 'JWT_ISSUER') ?? 'rz-auth',
      audience: raw(env, 'JWT_AUDIENCE') ?? 'rz-api',
    },
    passwords: {
      // NIST SP 800-63B-4: at least 15 characters for single-factor passwords, never below 8.
      minLength: int(env, 'PASSWORD_MIN_LENGTH', 15, 8, 256),
      // OWASP's argon2id floor is m=19 MiB, t=2, p=1; weaker settings refuse to start.
      argon2: {
        memoryKiB: int(env, 'ARGON2_MEMORY_KIB', 19456, 19456, 4 * 1024 * 1024),
        timeCost: int(env, 'ARGON2_TIME_COST', 2, 2, 100),
        parallelism: int(env, 'ARGON2_PARALLELISM', 1, 1, 16),
      },
      hashConcurrency: int(env, 'HASH_CONCURRENCY', cores, 1, 256),
      hashQueueLimit: int(env, 'HASH_QUEUE_LIMIT', 256, 0, 100_000),
    },
    signupEnabled: bool(env, 'SIGNUP_ENABLED', true),
    usageFlushMs: int(env, 'LAST_USED_FLUSH_MS', 5000, 100, 3_600_000),
    changes: {
      // At most 5 s: the README promises that a change whose announcement was lost is seen within seconds.
      pollMs: int(env, 'CHANGES_POLL_MS', 1000, 100, 5000),
      // At least an hour, far beyond any poll interval: only an instance away that long can miss an entry.
      retentionMs: int(env, 'CHANGES_RETENTION_HOURS', 24, 1, 24 * 365) * 3_600_000,
    },
    rateLimits: parseRateLimits(env),
    trustProxy: parseTrustProxy(raw(env, 'TRUST_PROXY')),
    workers: parseWorkers(raw(env, 'WORKERS'), 'WORKERS'),
    // Closing the store and writing out the log take a moment even when no request is in flight.
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 1000, 600_000),
    scopes: parseScopes(env),
    auditRetentionMs: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500) * DAY_MS,
    tokens: { maxLifetimeDays: optionalInt(env, 'TOKEN_MAX_LIFETIME_DAYS', 1, 36_500), idleRevokeDays: optionalInt(env, 'TOKEN_IDLE_REVOKE_DAYS', 1, 36_500) },
    events: {
      // A comment line at least every 15 s keeps proxies open; a few seconds by default, since a
      // verifier trusts its cache only while bytes keep arriving (docs/platform-services.md).
      heartbeatMs: int(env, 'EVENTS_HEARTBEAT_MS', 5000, 1000, 15_000),
      maxStreamsPerCredential: int(env, 'EVENTS_STREAMS_PER_CREDENTIAL', 100, 1, 10_000),
    },
    webhooks: {
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false), timeoutMs: int(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60) * 1000,
      connectTimeoutMs: int(env, 'WEBHOOK_CONNECT_TIMEOUT_SECONDS', 5, 1, 60) * 1000,
    },
    keyEncryption: sealingKeysFrom(env),
    corsOrigins: parseCorsOrigins(env),
    leaks: { githubKeysUrl: parseKeysUrl(raw(env, 'LEAK_GITHUB_KEYS_URL')) },
    caps: capsFrom(env),
    metrics: metricsFrom(env), mail: mailFrom(env),
    accountEmail: accountEmailFrom(env, raw(env, 'SMTP_URL') !== undefined),
    mfa: mfaFrom(env), derived: derivedFrom(env),
    device: deviceFlowFrom(env, { host, port }),
  };
  checkHopsOnWildcard(config.trustProxy, config.host, bool(env, HOPS_CONFIRMED, false));
  return deepFreeze(config);
}
