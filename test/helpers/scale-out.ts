import { afterAll, beforeAll } from 'vitest';
import { freshPostgresDatabase, REDIS_URL, uniquePrefix } from './services.js';

/**
 * The environment of server processes that share one store, for the enclosing describe block: a
 * fresh PostgreSQL database and a fresh Redis key prefix, rate limits off, plus `extra`. The object
 * is filled before the block's tests run, and the database is dropped after them.
 */
export function scaleOutEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    Object.assign(env, { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix(), RATE_LIMITS: 'off', ...extra });
  });
  afterAll(() => drop?.());
  return env;
}
