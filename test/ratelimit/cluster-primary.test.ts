import cluster, { type Worker } from 'node:cluster';
import { describe, expect, it } from 'vitest';
import { counterOptions } from '../../src/ratelimit/limiter.js';
import { holdClusterCounters } from '../../src/ratelimit/cluster.js';
import { config } from './limiter-contract.js';

const CHANNEL = 'rate_limiter_flexible';

interface Answer {
  readonly type: string;
  readonly promiseId?: string;
  readonly data?: { consumedPoints: number } | null;
}

/**
 * The primary of `serve --workers` holds every worker's counters. Workers reach it over IPC; here
 * the messages a worker's limiter sends are delivered to the primary's real listener directly.
 */
function asWorker(): { send(message: object): void; answers: Answer[] } {
  const answers: Answer[] = [];
  const worker = { send: (message: Answer) => answers.push(message) } as unknown as Worker;
  return { send: (message) => cluster.emit('message', worker, message), answers };
}

// Regression: the library's master made an unbounded in-memory store for each worker limiter, so
// under `serve --workers` any client could grow the primary's counters without limit.
describe('cluster primary: the counters it holds for the workers are capped', () => {
  it('keeps at most the cap of keys per policy, for the limiter the workers announce', async () => {
    const limits = config({ 'login-email': { quota: 10, windowSeconds: 600 } });
    const stores = holdClusterCounters(limits, 'rz-cluster-test:', 50);
    const { keyPrefix, points, duration } = counterOptions('login-email', { quota: 10, windowSeconds: 600 }, 'rz-cluster-test:');
    const worker = asWorker();
    worker.send({ channel: CHANNEL, type: 'init', opts: { keyPrefix, points, duration } });
    for (let i = 0; i < 500; i++) {
      worker.send({ channel: CHANNEL, keyPrefix, func: 'consume', promiseId: `p${i}`, data: { key: `made-up-${i}`, arg: 1, opts: {} } });
    }
    await new Promise((resolve) => setImmediate(resolve));

    expect(worker.answers.filter((a) => a.type === 'resolve')).toHaveLength(500);
    expect(stores.get('login-email')?.storedKeys()).toBe(50);
  });
});
