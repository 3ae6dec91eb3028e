import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/**
 * Each backing store and whether it answered. A failure keeps the error itself, for the log: its
 * message is the driver's (addresses, connection states) and never goes into a response.
 */
export type Readiness = Record<string, { ok: true } | { ok: false; error: unknown }>;

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

export async function probe(check: () => Promise<unknown>): Promise<Readiness[string]> {
  try {
    await withTimeout(check(), 2000);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Asks the database (and Redis, when configured) for a trivial answer. */
export async function checkReadiness(database: Database, redis: Redis | null): Promise<Readiness> {
  const checks: Array<Promise<[string, Awaited<ReturnType<typeof probe>>]>> = [
    probe(() => sql`select 1`.execute(database.db)).then((r) => ['database', r]),
  ];
  if (redis) checks.push(probe(() => redis.ping()).then((r) => ['redis', r]));
  return Object.fromEntries(await Promise.all(checks));
}
