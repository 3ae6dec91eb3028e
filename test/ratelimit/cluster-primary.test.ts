import cluster, { type Worker } from 'node:cluster';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterCounters, holdClusterCounters, type PrimaryChannel } from '../../src/ratelimit/cluster.js';
import { config } from './limiter-contract.js';

/**
 * A worker and the primary in one process: what the worker's counters send is delivered to the
 * primary's real listener (as node:cluster's `message` event), and the primary's answers back to
 * the worker's, each on a later turn as IPC would.
 */
function wired(options: { primaryGone?: boolean; primaryMute?: boolean } = {}): { channel: PrimaryChannel; requests: unknown[] } {
  const listeners: Array<(message: unknown) => void> = [];
  const requests: unknown[] = [];
  const worker = {
    isConnected: () => true,
    send: (answer: unknown) => setImmediate(() => listeners.forEach((listener) => listener(answer))),
  } as unknown as Worker;
  const channel: PrimaryChannel = {
    connected: !options.primaryGone,
    send: (request) => {
      requests.push(request);
      if (!options.primaryMute) setImmediate(() => cluster.emit('message', worker, request));
    },
    on: (_event, listener) => listeners.push(listener),
  };
  return { channel, requests };
}

afterEach(() => {
  cluster.removeAllListeners('message');
});

// Regression: the library's cluster master made an unbounded in-memory store for each worker
// limiter, so under `serve --workers` any client could grow the primary's counters without limit.
describe('cluster primary: the counters it holds for the workers are capped', () => {
  it('keeps at most the cap of keys per policy', async () => {
    const stores = holdClusterCounters(config({ 'login-email': { quota: 10, windowSeconds: 600 } }), 50);
    const counters = new ClusterCounters(wired().channel);
    const results = await Promise.allSettled(Array.from({ length: 500 }, (_, i) => counters.consume('login-email', `made-up-${i}`)));

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(500);
    expect(stores.get('login-email')?.storedKeys()).toBe(50);
  });
});

describe('cluster primary: workers count against one store per policy', () => {
  it('admits exactly L of N parallel requests from two workers, and refuses the rest with the count', async () => {
    holdClusterCounters(config({ credential: { quota: 10, windowSeconds: 60 } }));
    const a = new ClusterCounters(wired().channel);
    const b = new ClusterCounters(wired().channel);
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('credential', 'shared')));

    const admitted = results.filter((r): r is PromiseFulfilledResult<RateLimiterRes> => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.reason).toBeInstanceOf(RateLimiterRes);
    expect(Math.min(...admitted.map((r) => r.value.remainingPoints))).toBe(0);
    const spent = refused[0]?.reason as RateLimiterRes;
    expect(spent.remainingPoints).toBe(0);
    expect(spent.msBeforeNext).toBeGreaterThan(0);
    expect(spent.msBeforeNext).toBeLessThanOrEqual(60_000);
  });

  it('counts policies apart, and `points` as many requests', async () => {
    holdClusterCounters(config({ credential: { quota: 10, windowSeconds: 60 }, address: { quota: 3, windowSeconds: 60 } }));
    const counters = new ClusterCounters(wired().channel);
    expect((await counters.consume('credential', 'k', 4)).remainingPoints).toBe(6);
    expect((await counters.consume('address', 'k')).remainingPoints).toBe(2);
  });

  it('fails (an Error, not a count) for a policy the primary does not hold, a primary gone, or one that does not answer', async () => {
    holdClusterCounters(config({ credential: { quota: 10, windowSeconds: 60 } }));
    await expect(new ClusterCounters(wired().channel).consume('address', 'k')).rejects.toThrow('could not count');
    await expect(new ClusterCounters(wired({ primaryGone: true }).channel).consume('credential', 'k')).rejects.toThrow('primary is gone');
    const mute = wired({ primaryMute: true });
    await expect(new ClusterCounters(mute.channel, 20).consume('credential', 'k')).rejects.toThrow('did not answer within 20 ms');
    expect(mute.requests).toHaveLength(1);
  });

  it('ignores messages that are not its own', () => {
    const stores = holdClusterCounters(config({ credential: { quota: 10, windowSeconds: 60 } }));
    const worker = { isConnected: () => true, send: () => expect.fail('answered a foreign message') } as unknown as Worker;
    for (const message of [null, 'text', { channel: 'rate_limiter_flexible', id: 1 }, { channel: 'rz-auth:rate-limit', id: '1', policy: 'credential', key: 'k', points: 1 }]) {
      cluster.emit('message', worker, message);
    }
    expect(stores.get('credential')?.storedKeys()).toBe(0);
  });
});
