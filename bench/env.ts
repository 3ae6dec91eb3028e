import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { POLICIES, POLICY_NAMES } from '../src/ratelimit/policies.js';

/*
 * The one place the environment of the rz-auth server under test is decided. Everything is the
 * shipped default except: the store (a fresh one per run), the port, and the rate-limit quotas,
 * which stay ON (checking them is part of every request's cost) but far above what the load reaches.
 */

export const MODES = ['sqlite', 'postgres'] as const;
export type Mode = (typeof MODES)[number];

/** The largest quota rz-auth accepts, per minute: millions of requests below it in any run. */
const UNREACHABLE_QUOTA = '1000000000/60';

/** A fresh store for one run and the variables that point rz-auth at it. */
export interface Store {
  readonly mode: Mode;
  readonly description: string;
  readonly env: Readonly<Record<string, string>>;
  dispose(): Promise<void>;
}

function sqliteStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'rz-bench-'));
  const path = join(dir, 'rz-auth.db');
  return {
    mode: 'sqlite',
    description: `SQLite, fresh file ${path} (SQLITE_SYNCHRONOUS default: NORMAL)`,
    env: { DATABASE_URL: `sqlite:${path}` },
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * PostgreSQL + Redis, the scale-out store: a fresh database on the local PostgreSQL server and the
 * local Redis with a per-run key prefix, both removed afterwards. TEST_POSTGRES_URL and
 * TEST_REDIS_URL (as in the tests) point elsewhere.
 */
async function postgresStore(): Promise<Store> {
  const admin = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const name = `rz_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const prefix = `rz-bench:${name}:`;
  await withPostgres(admin, (client) => client.query(`create database ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    mode: 'postgres',
    description: `PostgreSQL, fresh database ${name}; Redis ${redisUrl}, key prefix ${prefix}`,
    env: { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, REDIS_PREFIX: prefix },
    async dispose() {
      await withPostgres(admin, (client) => client.query(`drop database if exists ${name} with (force)`));
      const redis = new Redis(redisUrl);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}

async function withPostgres<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates the store for a run. */
export async function createStore(mode: Mode): Promise<Store> {
  return mode === 'sqlite' ? sqliteStore() : postgresStore();
}

/** `RATE_LIMIT_*` for every policy rz-auth defines, so a policy added later is covered too. */
export function rateLimitEnv(): Record<string, string> {
  return Object.fromEntries(POLICY_NAMES.map((name) => [POLICIES[name].env, UNREACHABLE_QUOTA]));
}

/**
 * The environment of `rz-auth serve`: nothing inherited from the caller's shell except PATH and HOME
 * (a stray DATABASE_URL or LOG_LEVEL must not change what is measured). LOG_LEVEL is the shipped
 * `info`, one JSON line per request; the harness sends stdout to /dev/null. `RZ_BENCH_ENV` (a JSON
 * object) adds or overrides variables, to measure what a setting costs, e.g.
 * `RZ_BENCH_ENV='{"LOG_LEVEL":"silent"}' npm run bench`.
 */
export function rzAuthEnv(store: Store, port: number): NodeJS.ProcessEnv {
  const { PATH, HOME } = process.env;
  return {
    ...(PATH === undefined ? {} : { PATH }),
    ...(HOME === undefined ? {} : { HOME }),
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...rateLimitEnv(),
    ...store.env,
    ...(process.env.RZ_BENCH_ENV ? (JSON.parse(process.env.RZ_BENCH_ENV) as Record<string, string>) : {}),
  };
}
