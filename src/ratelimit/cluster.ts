import cluster, { type Worker } from 'node:cluster';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { type BoundedMemoryLimiter, policyCounter } from './bounded-memory.js';
import { POLICY_NAMES, type PolicyName, type RateLimitConfig } from './policies.js';

/*
 * The counters of `serve --workers` without Redis: the primary holds one bounded in-process store
 * per policy (bounded-memory.ts) for every worker, and a worker counts a request with one round trip
 * over node:cluster's IPC channel. Our own two messages, so that the primary's stores are ours.
 */

const CHANNEL = 'rz-auth:rate-limit';

/** A worker's request: count `points` against `key` under `policy`. */
interface CountRequest {
  readonly channel: typeof CHANNEL;
  readonly id: number;
  readonly policy: string;
  readonly key: string;
  readonly points: number;
}

/** The primary's answer: the store's outcome, or `failed` when it could not count. */
type CountAnswer =
  | {
      readonly channel: typeof CHANNEL;
      readonly id: number;
      readonly allowed: boolean;
      readonly remainingPoints: number;
      readonly msBeforeNext: number;
      readonly consumedPoints: number;
      readonly isFirstInDuration: boolean;
    }
  | { readonly channel: typeof CHANNEL; readonly id: number; readonly failed: true };

const isRecord = (message: unknown): message is Record<string, unknown> => typeof message === 'object' && message !== null;

const isCountRequest = (message: unknown): message is CountRequest =>
  isRecord(message) &&
  message.channel === CHANNEL &&
  typeof message.id === 'number' &&
  typeof message.policy === 'string' &&
  typeof message.key === 'string' &&
  typeof message.points === 'number';

const outcome = (id: number, res: RateLimiterRes, allowed: boolean): CountAnswer => ({
  channel: CHANNEL,
  id,
  allowed,
  remainingPoints: res.remainingPoints,
  msBeforeNext: res.msBeforeNext,
  consumedPoints: res.consumedPoints,
  isFirstInDuration: res.isFirstInDuration,
});

/**
 * In the primary: holds the counters of every enabled policy and answers the workers' requests.
 * Called before any worker is forked, so no request arrives before the stores exist. Returns them.
 */
export function holdClusterCounters(config: RateLimitConfig, maxKeys?: number): ReadonlyMap<PolicyName, BoundedMemoryLimiter> {
  const stores = new Map<string, BoundedMemoryLimiter>();
  for (const policy of POLICY_NAMES) {
    const quota = config[policy];
    if (quota) stores.set(policy, policyCounter(quota, maxKeys));
  }
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isCountRequest(message)) return;
    // A worker that has gone since it asked needs no answer (sending to it would be an error).
    const answer = (reply: CountAnswer) => worker.isConnected() && worker.send(reply);
    const store = stores.get(message.policy);
    if (!store) return answer({ channel: CHANNEL, id: message.id, failed: true });
    store.consume(message.key, message.points).then(
      (res) => answer(outcome(message.id, res, true)),
      // The library rejects with a RateLimiterRes when the quota is spent, an Error when it fails.
      (rejection: unknown) => answer(rejection instanceof RateLimiterRes ? outcome(message.id, rejection, false) : { channel: CHANNEL, id: message.id, failed: true }),
    );
  });
  return stores as ReadonlyMap<PolicyName, BoundedMemoryLimiter>;
}

/** What a worker's counters talk to the primary through: `process` in a cluster worker. */
export interface PrimaryChannel {
  readonly connected: boolean;
  send(message: CountRequest): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** This worker's IPC channel to the primary. */
export const workerChannel = (): PrimaryChannel => ({
  get connected() {
    return process.connected;
  },
  send: (message) => process.send?.(message),
  on: (event, listener) => process.on(event, listener),
});

interface Waiting {
  readonly resolve: (res: RateLimiterRes) => void;
  readonly reject: (reason: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * In a worker: counts against the primary's stores. Resolves with the library's RateLimiterRes, or
 * rejects with one when the quota is spent, as the library's limiters do, and with an Error when the
 * primary cannot be reached or does not answer within `timeoutMs`.
 */
export class ClusterCounters {
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly primary: PrimaryChannel,
    private readonly timeoutMs = 2000,
  ) {
    primary.on('message', (message) => this.answered(message));
  }

  consume(policy: PolicyName, key: string, points = 1): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      if (!this.primary.connected) return reject(new Error('the cluster primary is gone'));
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the cluster primary did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.primary.send({ channel: CHANNEL, id, policy, key, points });
    });
  }

  private answered(message: unknown): void {
    if (!isRecord(message) || message.channel !== CHANNEL || typeof message.id !== 'number') return;
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    clearTimeout(waiting.timer);
    const answer = message as CountAnswer;
    if ('failed' in answer) return waiting.reject(new Error('the cluster primary could not count'));
    const res = new RateLimiterRes(answer.remainingPoints, answer.msBeforeNext, answer.consumedPoints, answer.isFirstInDuration);
    if (answer.allowed) waiting.resolve(res);
    else waiting.reject(res);
  }
}
