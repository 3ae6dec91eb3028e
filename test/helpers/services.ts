import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/** The backing services CI provides (and a developer laptop may not). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function reachable(name: string, probe: () => Promise<void>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch (error) {
    // CI sets RZ_REQUIRE_SERVICES so a missing service fails the run instead of skipping tests.
    if (process.env.RZ_REQUIRE_SERVICES) throw new Error(`${name} is required (RZ_REQUIRE_SERVICES) but unreachable`, { cause: error });
    console.warn(`\n!!! ${name} is not reachable: its tests are SKIPPED. Start it to run them. (${String(error)})\n`);
    return false;
  }
}

export const redisAvailable = (): Promise<boolean> =>
  reachable(`Redis at ${REDIS_URL}`, async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  });

export const postgresAvailable = (): Promise<boolean> =>
  reachable(`PostgreSQL at ${POSTGRES_URL}`, async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 1000 });
    await client.connect();
    await client.end();
  });

/** A Redis key prefix no other test shares. */
export const uniquePrefix = (): string => `rz-test:${randomUUID().slice(0, 8)}:`;

/**
 * A fresh, empty PostgreSQL database on the test server (each test app its own), dropped by the
 * returned function.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `rz_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
