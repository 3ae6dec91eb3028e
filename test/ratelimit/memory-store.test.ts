import { afterEach, beforeEach, vi } from 'vitest';
import { RateLimiter } from '../../src/ratelimit/limiter.js';
import { config, limiterContract } from './limiter-contract.js';

// The in-process store keeps time with Date and timers: a fake clock moves windows without sleeping.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

limiterContract('in-process', () => ({
  make: (overrides) => new RateLimiter(config(overrides), null),
  endWindow: async (policy) => {
    const window = { credential: 60, address: 60 }[policy] ?? 60;
    vi.advanceTimersByTime(window * 1000);
  },
}));
