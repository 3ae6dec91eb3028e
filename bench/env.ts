import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { POLICIES, POLICY_NAMES } from '../src/ratelimit/policies.js';
import { freshPostgresDatabase, REDIS_URL, uniquePrefix } from '../test/helpers/services.js';

/*
 * The one place the environment of the rz-auth server under test is decided. Everything is the
 * shipped default except the store (a fresh one per run), the port, and the rate-limit quotas,
 * which stay ON (checking them is part of every request's cost) but far above what a load reaches.
 */

export const MODES = ['sqlite', 'postgres'] as const;
export type Mode = (typeof MODES)[number];

/**
 * Authenticator apps need a key for their secrets at rest (docs/mfa.md); one per run, the same for
 * every process of it (the servers, the CLI, the harness writing factors in bench/mfa.ts).
 */
const MFA_ENCRYPTION_KEY = randomBytes(32).toString('base64');
/** Derived tokens need DERIVE_KEK (docs/derived-tokens.md): one per run, like MFA_ENCRYPTION_KEY. */
const DERIVE_KEK = randomBytes(32).toString('base64');

/** The WebAuthn relying party rz-auth runs under in the bench. */
export const WEBAUTHN_RP = { id: 'bench.example.com', origin: 'https://auth.bench.example.com' } as const;

/** The largest quota rz-auth accepts, per minute: no run comes near it. */
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
    description: `SQLite, fresh file ${path}`,
    env: { DATABASE_URL: `sqlite:${path}` },
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The scale-out store: a fresh database on the tests' PostgreSQL and a fresh key prefix on their Redis. */
async function postgresStore(): Promise<Store> {
  const database = await freshPostgresDatabase();
  const prefix = uniquePrefix();
  return {
    mode: 'postgres',
    description: `PostgreSQL, fresh database ${new URL(database.url).pathname.slice(1)}; Redis ${REDIS_URL}, key prefix ${prefix}`,
    env: { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: prefix },
    async dispose() {
      await database.drop();
      await deleteKeys(prefix);
    },
  };
}

/** Deletes what a run left in Redis: the change feed's keys do not expire. */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
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
}

export async function createStore(mode: Mode): Promise<Store> {
  return mode === 'sqlite' ? sqliteStore() : postgresStore();
}

/** `RATE_LIMIT_*` for every policy rz-auth defines, so a policy added later is covered too. */
export function rateLimitEnv(): Record<string, string> {
  return Object.fromEntries(POLICY_NAMES.map((name) => [POLICIES[name].env, UNREACHABLE_QUOTA]));
}

/**
 * What `rz-auth serve` gets on top of PATH and HOME (childEnv: nothing else from the caller's
 * shell, where a stray DATABASE_URL or LOG_LEVEL would change what is measured). LOG_LEVEL is the
 * shipped `info`, one JSON line per request. `RZ_BENCH_ENV` (a JSON object) adds or overrides
 * variables, to measure what a setting costs.
 */
export function rzAuthEnv(store: Store): Record<string, string> {
  return {
    LOG_LEVEL: 'info',
    ...rateLimitEnv(),
    // The creation scenario makes every token for one user: past the shipped cap (500) it would
    // measure 409s. Each creation still counts the user's active tokens under the cap.
    MAX_API_TOKENS_PER_USER: '1000000',
    MFA_ENCRYPTION_KEY,
    DERIVE_KEK,
    // Passkeys on (docs/mfa.md), for passkey-login; the software authenticator of bench/passkey.ts
    // signs for this relying party and origin.
    WEBAUTHN_RP_ID: WEBAUTHN_RP.id,
    WEBAUTHN_ORIGINS: WEBAUTHN_RP.origin,
    // The device flow needs the page's address (docs/device-flow.md): the same origin as the passkeys'.
    PUBLIC_URL: WEBAUTHN_RP.origin,
    ...store.env,
    ...(process.env.RZ_BENCH_ENV ? (JSON.parse(process.env.RZ_BENCH_ENV) as Record<string, string>) : {}),
  };
}
