import { describe, expect, it } from 'vitest';
import { DELIVERY_WINDOW_MS, nextAttemptAt, RETRY_DELAYS_MS } from '../../src/webhooks/worker.js';

const T0 = Date.parse('2026-11-21T09:30:00.000Z');
const S = 1000;
const H = 3_600_000;

/** Contract §9: retried with backoff (the first retry within a minute) until a day has passed. */
describe('webhook retry schedule', () => {
  it('waits 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each moved by at most 20 % either way', () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * S, 60 * S, 300 * S, 1800 * S, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect(nextAttemptAt(T0, 1, T0, () => 0)).toBe(T0 + 4 * S);
    expect(nextAttemptAt(T0, 1, T0, () => 1)).toBe(T0 + 6 * S);
    expect(nextAttemptAt(T0, 1, T0, () => 0.5)).toBe(T0 + 5 * S);
    expect(nextAttemptAt(T0, 2, T0 + 5 * S, () => 1)).toBe(T0 + 5 * S + 72 * S);
    for (let i = 0; i < 100; i++) {
      const wait = (nextAttemptAt(T0, 1, T0) ?? 0) - T0;
      expect(wait).toBeGreaterThanOrEqual(4 * S);
      expect(wait).toBeLessThanOrEqual(6 * S);
    }
  });

  it('never schedules past a day after creation, and an attempt failing at or after it is the last', () => {
    const end = T0 + DELIVERY_WINDOW_MS;
    expect(nextAttemptAt(T0, 7, T0 + 20 * H, () => 0.5)).toBe(end);
    expect(nextAttemptAt(T0, 8, end - 1, () => 0)).toBe(end);
    expect(nextAttemptAt(T0, 8, end, () => 0)).toBeNull();
    expect(nextAttemptAt(T0, 3, end + 1)).toBeNull();
    // The schedule spent: no ninth retry, even inside the window.
    expect(nextAttemptAt(T0, 9, T0 + H)).toBeNull();
  });

  it('reaches the end of the day on the schedule without jitter: the first attempt and eight retries, the last at 24 h', () => {
    let at = T0;
    const attempts = [at];
    for (let n = 1; ; n++) {
      const next = nextAttemptAt(T0, n, at, () => 0.5);
      if (next === null) break;
      attempts.push((at = next));
    }
    expect(attempts).toHaveLength(9);
    expect(attempts.at(-1)).toBe(T0 + DELIVERY_WINDOW_MS);
  });
});
