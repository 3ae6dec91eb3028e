import { RateLimiterClusterMaster, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { BoundedMemoryLimiter } from './bounded-memory.js';
import { counterOptions, MAX_KEYS_PER_POLICY } from './limiter.js';
import { POLICY_NAMES, type PolicyName, type RateLimitConfig } from './policies.js';

/** The part of the library's cluster master that holds one counter store per worker limiter's prefix. */
interface MasterStores {
  readonly _rateLimiters: Record<string, RateLimiterAbstract>;
}

/**
 * The counters of `serve --workers` without Redis, held in the primary for every worker. The
 * library's master makes an unbounded RateLimiterMemory for each limiter a worker announces, unless
 * one is registered under that limiter's prefix already: the bounded stores are registered first,
 * with the options the workers' limiters are built from (the same configuration). Returns them.
 */
export function holdClusterCounters(config: RateLimitConfig, redisPrefix: string, maxKeys = MAX_KEYS_PER_POLICY): Map<PolicyName, BoundedMemoryLimiter> {
  const master = new RateLimiterClusterMaster() as unknown as MasterStores;
  const stores = new Map<PolicyName, BoundedMemoryLimiter>();
  for (const policy of POLICY_NAMES) {
    const quota = config[policy];
    if (!quota) continue;
    const options = counterOptions(policy, quota, redisPrefix);
    const store = new BoundedMemoryLimiter(options, maxKeys);
    master._rateLimiters[options.keyPrefix] = store;
    stores.set(policy, store);
  }
  return stores;
}
