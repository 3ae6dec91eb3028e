import type { Redis } from 'ioredis';

/**
 * The shared Redis connection. Commands fail fast while it is down (no offline queue) and after 2 s
 * without an answer, so callers can fall back or fail closed instead of hanging; ioredis keeps
 * reconnecting in the background.
 */
export async function connectRedis(url: string, onError: (error: unknown) => void): Promise<Redis> {
  // Loaded only when REDIS_URL is set: a single instance does not carry the client in memory.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // A Redis that holds the connection but stops answering (stalled, paused, a partition that
    // drops packets) must fail a command too: every request checks the change feed here first.
    commandTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  reportOutages(redis, onError);
  return redis;
}

/** Reports a connection's errors once per outage, not once per reconnect attempt. */
export function reportOutages(redis: Redis, onError: (error: unknown) => void): void {
  let reported = false;
  redis.on('error', (error) => {
    if (!reported) onError(error);
    reported = true;
  });
  redis.on('ready', () => {
    reported = false;
  });
}

/** Waits until the connection is ready, up to `timeoutMs`; false if it is not ready by then. */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
