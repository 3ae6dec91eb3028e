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

/**
 * Makes sure the connection really uses the database REDIS_URL names: when Redis refuses that
 * SELECT (an index beyond its `databases`), ioredis reports an error and goes on in database 0,
 * which another deployment may be using. Run once the connection is ready.
 * @throws Error naming the database when Redis refuses it.
 */
export async function checkDatabase(redis: Redis): Promise<void> {
  const db = redis.options.db ?? 0;
  try {
    await redis.select(db);
  } catch (error) {
    throw new Error(`REDIS_URL names database ${db}, which Redis refuses`, { cause: error });
  }
}
