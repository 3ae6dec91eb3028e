import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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

// Regression: the in-process store kept a record and a timer per key for a whole window, with no
// cap, so any client could grow it by sending new keys (30,000 made-up emails: 30,000 counters).
describe('in-process store: a cap on keys per policy', () => {
  const CAP = 100;
  const make = (quota = 3) => new RateLimiter(config({ address: { quota, windowSeconds: 60 } }), null, 'rz:', CAP);
  const flood = async (limiter: RateLimiter, n: number, tag = 'flood') => {
    for (let i = 0; i < n; i++) await limiter.consume('address', `${tag}-${i}`);
  };

  it('a quota of a billion and a key counted far past the others: eviction files it at its count and keeps it', async () => {
    const limiter = make(1_000_000_000);
    // One key counted well past the others, so the first eviction files it again at its count.
    for (let i = 0; i < 50; i++) await limiter.consume('address', 'busy');
    await flood(limiter, 3 * CAP);
    expect(limiter.storedKeys('address')).toBe(CAP);
    expect((await limiter.consume('address', 'busy'))?.remaining).toBe(1_000_000_000 - 51);
  });

  it('holds at most the cap, however many keys arrive', async () => {
    const limiter = make();
    await flood(limiter, 10 * CAP);
    expect(limiter.storedKeys('address')).toBe(CAP);
  });

  it('a key spent in its window outlives a flood of new keys: it stays refused', async () => {
    const limiter = make();
    for (let i = 0; i < 3; i++) await limiter.consume('address', 'victim');
    expect((await limiter.consume('address', 'victim'))?.allowed).toBe(false);
    await flood(limiter, 10 * CAP);
    expect(await limiter.consume('address', 'victim')).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('the least counted key goes first, the oldest of them; more counted keys stay', async () => {
    const limiter = make(10);
    for (let i = 0; i < 2; i++) await limiter.consume('address', 'twice');
    await flood(limiter, CAP - 1, 'once');
    await limiter.consume('address', 'newcomer');
    expect(limiter.storedKeys('address')).toBe(CAP);
    // "once-0" was the oldest key counted once: it starts over; "twice" goes on counting.
    expect(await limiter.consume('address', 'once-0')).toMatchObject({ remaining: 9 });
    expect(await limiter.consume('address', 'twice')).toMatchObject({ remaining: 7 });
  });

  it('keys whose window has ended leave, and make room, with no eviction', async () => {
    const limiter = make();
    await flood(limiter, CAP, 'old');
    vi.advanceTimersByTime(60_000);
    expect(limiter.storedKeys('address')).toBe(0);
    await flood(limiter, CAP, 'new');
    expect(limiter.storedKeys('address')).toBe(CAP);
    expect(await limiter.consume('address', 'new-0')).toMatchObject({ remaining: 1 });
  });
});
