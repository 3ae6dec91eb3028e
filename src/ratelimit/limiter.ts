import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import cluster from 'node:cluster';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ProblemError } from '../errors.js';
import { BoundedMemoryLimiter, type CounterOptions, MAX_KEYS_PER_POLICY, policyCounter } from './bounded-memory.js';
import { ClusterCounters, workerChannel } from './cluster.js';
import { BoundedMap } from '../lib/bounded-map.js';
import { POLICY_NAMES, type PolicyName, type Quota, type RateLimitConfig } from './policies.js';

/** The outcome of one check, enough to write the RateLimit headers. */
export interface Decision {
  /** `child`: the bucket of a derived token's `rl` caveat, keyed by its child id (contract §14.5). */
  readonly policy: PolicyName | 'child';
  readonly quota: number;
  readonly windowSeconds: number;
  readonly remaining: number;
  /** Seconds until the window resets. */
  readonly resetSeconds: number;
  readonly allowed: boolean;
}

/**
 * Policies whose counters must be shared for the limit to mean anything: if Redis is unreachable,
 * login and signup fail closed (503) rather than let a brute force run against per-instance counters.
 */
const FAIL_CLOSED: ReadonlySet<PolicyName> = new Set(['login-address', 'login-email', 'signup-address', 'signup-email']);

/** One policy's counter options in Redis. */
export const counterOptions = (policy: PolicyName, quota: Quota, redisPrefix: string): CounterOptions => ({
  keyPrefix: `${redisPrefix}rl:${policy}`,
  points: quota.quota,
  duration: quota.windowSeconds,
});

/**
 * The counter key of an email as `normalizeEmail` leaves it (one address, one counter, however it
 * was typed), hashed: Redis holds no email in the clear, though a reader of Redis could confirm a
 * guessed one (the hash is unkeyed, so every instance derives the same key with nothing shared).
 */
export const emailKey = (normalizedEmail: string): string => createHash('sha256').update(normalizedEmail).digest('base64url').slice(0, 22);

/** One policy's counters, wherever they are: resolves with the count, rejects with it when the quota is spent. */
interface Counter {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
}

/**
 * Fixed-window counters per policy (rate-limiter-flexible, atomic in every store): in Redis when
 * configured (one Lua call per check), else in the cluster primary when this process is a
 * `serve --workers` worker (one IPC round trip), else in process. With Redis, the credential and
 * address limits fall back to a per-instance counter while Redis is unreachable.
 */
export class RateLimiter {
  private readonly limiters = new Map<PolicyName, { limiter: Counter; quota: Quota }>();
  /** The `child` buckets, one counter per quota a child's `rl` caveat names; a few hundred quotas at most are kept. */
  private readonly childCounters = new BoundedMap<string, Counter>(MAX_CHILD_QUOTAS);

  constructor(config: RateLimitConfig, private readonly redis: Redis | null, private readonly redisPrefix = 'rz:', private readonly maxKeys = MAX_KEYS_PER_POLICY) {
    const primary = !redis && cluster.isWorker ? new ClusterCounters(workerChannel()) : null;
    for (const policy of POLICY_NAMES) {
      const quota = config[policy];
      if (!quota) continue;
      const options = counterOptions(policy, quota, redisPrefix);
      const limiter: Counter = redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: redis,
            rejectIfRedisNotReady: true,
            ...(FAIL_CLOSED.has(policy) ? {} : { insuranceLimiter: new BoundedMemoryLimiter(options, this.maxKeys) }),
          })
        : primary
          ? { consume: (key, points) => primary.consume(policy, key, points) }
          : policyCounter(quota, this.maxKeys);
      this.limiters.set(policy, { limiter, quota });
    }
  }

  enabled(policy: PolicyName): boolean {
    return this.limiters.has(policy);
  }

  /** How many keys this process counts for `policy`; null when its counters live elsewhere (Redis, the cluster primary). */
  storedKeys(policy: PolicyName): number | null {
    const limiter = this.limiters.get(policy)?.limiter;
    return limiter instanceof BoundedMemoryLimiter ? limiter.storedKeys() : null;
  }

  /** Counts one request (or `points`) against `key`; null when the policy is off. @throws unavailable when the store fails. */
  consume(policy: PolicyName, key: string, points = 1): Promise<Decision | null> {
    return new Promise((resolve, reject) => this.count(policy, key, resolve, reject, points));
  }

  /**
   * {@link consume} for the hot path: the decision goes to `decided` (null at once when the policy is
   * off), or the store's failure to `failed` as a ProblemError, straight from the store's promise,
   * which saves a promise and a turn of the microtask queue per request. Neither callback may throw:
   * nothing would catch it.
   */
  count(policy: PolicyName, key: string, decided: (decision: Decision | null) => void, failed: (error: ProblemError) => void, points = 1): void {
    const entry = this.limiters.get(policy);
    if (!entry) return decided(null);
    this.countOn(policy, entry.limiter, entry.quota, key, decided, failed, points);
  }

  /**
   * One request of a derived child against its `rl` caveat's own quota (policy `child`, keyed by
   * child id): in Redis when configured, else in process (workers of one machine each count theirs).
   * Applies even with the other limits off: the holder of the parent asked for it.
   */
  countChild(key: string, quota: Quota, decided: (decision: Decision) => void, failed: (error: ProblemError) => void): void {
    const id = `${quota.quota}:${quota.windowSeconds}`;
    let counter = this.childCounters.get(id);
    if (!counter) {
      const options = { keyPrefix: `${this.redisPrefix}rl:child:${id}`, points: quota.quota, duration: quota.windowSeconds };
      counter = this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: new BoundedMemoryLimiter(options, this.maxKeys) }) : policyCounter(quota, this.maxKeys);
      this.childCounters.set(id, counter);
    }
    this.countOn('child', counter, quota, key, (decision) => decided(decision as Decision), failed, 1);
  }

  private countOn(policy: PolicyName | 'child', counter: Counter, quota: Quota, key: string, decided: (decision: Decision | null) => void, failed: (error: ProblemError) => void, points: number): void {
    counter.consume(key, points).then(
      (result) => decided(decide(policy, quota, result, true)),
      (error: unknown) => {
        // rate-limiter-flexible rejects with a RateLimiterRes when the quota is spent, an Error when the store fails.
        if (error instanceof RateLimiterRes) decided(decide(policy, quota, error, false));
        else failed(new ProblemError('unavailable', { detail: 'Rate limiting is unavailable right now. Retry shortly.', headers: { 'retry-after': '5' } }));
      },
    );
  }
}

/** Distinct `rl` quotas with their own counters; a child naming yet another evicts the oldest. */
const MAX_CHILD_QUOTAS = 256;

function decide(policy: PolicyName | 'child', quota: Quota, result: RateLimiterRes, allowed: boolean): Decision {
  return {
    policy,
    quota: quota.quota,
    windowSeconds: quota.windowSeconds,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
    allowed,
  };
}
