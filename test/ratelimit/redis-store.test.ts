import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/ratelimit/limiter.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';
import { config, limiterContract } from './limiter-contract.js';

const available = await redisAvailable();

describe.skipIf(!available)('Redis store', () => {
  const redis = new Redis(REDIS_URL);
  // Until the connection is ready the limiter would use its in-process fallback: wait, so Redis is what is tested.
  beforeAll(() => redis.ping());
  afterAll(() => redis.quit());

  limiterContract('Redis', () => {
    const prefix = uniquePrefix();
    return {
      make: (overrides) => new RateLimiter(config(overrides), redis, prefix),
      // Redis keeps the window as the key's TTL; expiring the key is what the end of the window does.
      endWindow: async (policy, key) => {
        await redis.pexpire(`${prefix}rl:${policy}:${key}`, 0);
      },
    };
  });

  it('counts in Redis itself, not in the in-process fallback', async () => {
    const prefix = uniquePrefix();
    const limiter = new RateLimiter(config({ credential: { quota: 5, windowSeconds: 60 } }), redis, prefix);
    await limiter.consume('credential', 'seen');
    await limiter.consume('credential', 'seen');
    expect(await redis.get(`${prefix}rl:credential:seen`)).toBe('2');
    const ttl = await redis.pttl(`${prefix}rl:credential:seen`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
