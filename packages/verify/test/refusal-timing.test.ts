import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request, type ServerProcess, spawnServer } from '../../../test/helpers/server-process.js';
import { freshPostgresDatabase, postgresAvailable, REDIS_URL, redisAvailable, uniquePrefix } from '../../../test/helpers/services.js';
import { VerifyError, type Verifier } from '../src/index.js';
import { type Account, apiToken, type RzAuth, serviceToken, signup, startRzAuth, verifierOf } from './rz-auth.js';

/**
 * Contract §7: after a revocation's 204, a service using the package refuses the token within
 * 100 ms on loopback, on every instance. Real processes; the verifier holds the token in its cache
 * (proven by counting introspections), then verify() is called every 2 ms from the 204 until it
 * refuses. The bound is the contract's own; the measured delays are printed (on loopback they are
 * a few milliseconds, the event's trip through the change feed and the stream).
 */
const BOUND_MS = 100;
const ROUNDS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds from `change()` resolving (the 204) to the first refusal of `token`. */
async function msToRefusal(verifier: Verifier, token: string, change: () => Promise<number>): Promise<number> {
  const status = await change();
  const answered = performance.now();
  expect(status).toBe(204);
  for (;;) {
    const refused = await verifier.verify(`Bearer ${token}`).then(
      () => false,
      (error: unknown) => {
        expect(error).toBeInstanceOf(VerifyError);
        expect((error as VerifyError).code).toBe('invalid_token');
        return true;
      },
    );
    const elapsed = performance.now() - answered;
    if (refused) return Math.round(elapsed * 10) / 10;
    if (elapsed > 5000) throw new Error(`still accepted ${Math.round(elapsed)} ms after the 204`);
    await sleep(2);
  }
}

/** Caches `token` in the verifier: verified twice, introspected (at most) once. */
async function cached(verifier: Verifier, token: string): Promise<void> {
  const before = verifier.cacheSize;
  await verifier.verify(`Bearer ${token}`);
  await verifier.verify(`Bearer ${token}`);
  expect(verifier.cacheSize).toBe(before + 1);
}

/** Revocations and a logout made on `writer`, refused by `verifier` (connected elsewhere or not). */
async function measure(writer: string, verifier: Verifier, label: string): Promise<void> {
  const revocations: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const account = await signup(writer);
    const token = await apiToken(writer, account);
    await cached(verifier, token.token);
    revocations.push(await msToRefusal(verifier, token.token, async () => (await request(writer, 'DELETE', `/api/tokens/${token.id}`, { token: account.jwt })).status));
  }
  const logouts: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const account: Account = await signup(writer);
    await cached(verifier, account.jwt);
    logouts.push(await msToRefusal(verifier, account.jwt, async () => (await request(writer, 'POST', '/api/auth/logout', { token: account.jwt })).status));
  }
  console.log(`${label}: ms from the 204 to the verifier's refusal: revocation ${JSON.stringify(revocations)}, logout ${JSON.stringify(logouts)}`);
  for (const ms of [...revocations, ...logouts]) expect(ms).toBeLessThan(BOUND_MS);
}

describe('one rz-auth on SQLite', () => {
  let rz: RzAuth;
  let verifier: Verifier;
  beforeAll(async () => {
    rz = await startRzAuth();
    verifier = (await verifierOf(rz, await serviceToken(rz.env))).verifier;
  }, 60_000);
  afterAll(async () => {
    await verifier.close();
    await rz.stop();
  });

  it('a revoked API token and a logged-out JWT are refused within 100 ms of the 204', async () => {
    await measure(rz.url, verifier, 'SQLite, one instance');
  });
});

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('two rz-auth instances on PostgreSQL and Redis', () => {
  const servers: ServerProcess[] = [];
  let drop: () => Promise<void>;
  let env: Record<string, string>;
  beforeAll(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    env = { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix(), RATE_LIMITS: 'off' };
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop('SIGKILL');
  });
  afterAll(() => drop());

  it('a verifier streaming from instance A refuses within 100 ms of the 204 from instance B', async () => {
    servers.push(await spawnServer(env, 30_000), await spawnServer(env, 30_000));
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const { verifier } = await verifierOf(a, await serviceToken(env));
    try {
      await measure(b.url, verifier, 'PostgreSQL + Redis, verifier on A, change on B');
    } finally {
      await verifier.close();
    }
  });
});
