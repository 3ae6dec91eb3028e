import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/ratelimit/limiter.js';
import type { RateLimitConfig } from '../../src/ratelimit/policies.js';

export interface LimiterHarness {
  make(config: Partial<RateLimitConfig>): RateLimiter;
  /** Ends the current window of a key, as the passing of time would. */
  endWindow(policy: string, key: string): Promise<void>;
}

const OFF: RateLimitConfig = {
  credential: null,
  address: null,
  'login-address': null,
  'login-email': null,
  'passkey-address': null,
  'signup-address': null,
  'signup-email': null,
  'password-reset-address': null,
  'password-reset-email': null,
  'verify-email': null,
  'leak-report': null,
  service: null,
  'device-authorization': null,
  'device-token': null,
  'oauth-revoke': null,
  'device-lookup-user': null,
  'device-lookup-address': null,
};

export const config = (overrides: Partial<RateLimitConfig>): RateLimitConfig => ({ ...OFF, ...overrides });

/** The behaviour every rate-limit store must have: the in-process one and the Redis one. */
export function limiterContract(name: string, harness: () => LimiterHarness): void {
  describe(`rate-limit store contract: ${name}`, () => {
    it('admits exactly L of N parallel requests', async () => {
      const limiter = harness().make({ credential: { quota: 10, windowSeconds: 60 } });
      const results = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('credential', 'parallel')));
      expect(results.filter((d) => d?.allowed).length).toBe(10);
      expect(results.filter((d) => d && !d.allowed).length).toBe(40);
    });

    it('reports quota, window, remaining and time to reset', async () => {
      const limiter = harness().make({ address: { quota: 3, windowSeconds: 60 } });
      const first = await limiter.consume('address', 'k');
      expect(first).toMatchObject({ policy: 'address', quota: 3, windowSeconds: 60, remaining: 2, allowed: true });
      expect(first?.resetSeconds).toBeGreaterThan(0);
      expect(first?.resetSeconds).toBeLessThanOrEqual(60);
      await limiter.consume('address', 'k');
      expect(await limiter.consume('address', 'k')).toMatchObject({ remaining: 0, allowed: true });
      expect(await limiter.consume('address', 'k')).toMatchObject({ remaining: 0, allowed: false });
    });

    it('keeps keys and policies apart', async () => {
      const limiter = harness().make({ 'login-address': { quota: 1, windowSeconds: 60 }, 'login-email': { quota: 1, windowSeconds: 60 } });
      expect((await limiter.consume('login-address', 'a'))?.allowed).toBe(true);
      expect((await limiter.consume('login-address', 'a'))?.allowed).toBe(false);
      expect((await limiter.consume('login-address', 'b'))?.allowed).toBe(true);
      expect((await limiter.consume('login-email', 'a'))?.allowed).toBe(true);
    });

    it('admits again once the window has passed', async () => {
      const h = harness();
      const limiter = h.make({ credential: { quota: 2, windowSeconds: 60 } });
      await limiter.consume('credential', 'w');
      await limiter.consume('credential', 'w');
      expect((await limiter.consume('credential', 'w'))?.allowed).toBe(false);
      await h.endWindow('credential', 'w');
      expect(await limiter.consume('credential', 'w')).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('a policy that is off is never counted', async () => {
      const limiter = harness().make({});
      expect(limiter.enabled('credential')).toBe(false);
      expect(await limiter.consume('credential', 'x')).toBeNull();
    });
  });
}
