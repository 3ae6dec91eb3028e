import { Redis } from 'ioredis';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import { createApiToken, expectInvalidToken, json, login, registerApp, signup } from '../helpers/api.js';
import { freshPostgresDatabase, postgresAvailable, REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

/**
 * Two instances of the service on one store behave as one service: what one does, the other sees
 * on its very next request, whatever it had cached. In process for speed; test/e2e repeats the
 * essentials with real processes.
 */
const postgresUp = await postgresAvailable();
const redisUp = await redisAvailable();

interface Backend {
  readonly name: string;
  readonly available: boolean;
  readonly redis: boolean;
  /** Environment for both instances, and how to clean up. */
  setup(): Promise<{ env: Record<string, string>; dir?: string; cleanup: () => Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: 'one SQLite file',
    available: true,
    redis: false,
    async setup() {
      const dir = tempDir();
      return { env: {}, dir: dir.dir, cleanup: async () => dir.remove() };
    },
  },
  {
    name: 'PostgreSQL without Redis',
    available: postgresUp,
    redis: false,
    async setup() {
      const db = await freshPostgresDatabase();
      return { env: { DATABASE_URL: db.url }, cleanup: db.drop };
    },
  },
  {
    name: 'PostgreSQL and Redis',
    available: postgresUp && redisUp,
    redis: true,
    async setup() {
      const db = await freshPostgresDatabase();
      return { env: { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix() }, cleanup: db.drop };
    },
  },
];

/**
 * A change made by another process reaches this one over I/O, which always ends a turn of the
 * event loop; the change feed relies on that (one check per turn). Two apps in one process have no
 * I/O between them, so the next turn is awaited explicitly, as the network would.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const me = async (t: TestApp, token: string) => {
  await nextTurn();
  return json(t, 'GET', '/api/me', undefined, token);
};

/** Asks until `t` refuses `token`, failing after `deadlineMs`; a lost announcement takes up to one poll interval. */
async function untilRefused(t: TestApp, token: string, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while ((await me(t, token)).statusCode === 200) {
    if (Date.now() > deadline) throw new Error(`still accepted after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expectInvalidToken(await me(t, token));
}

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`two instances on ${backend.name}`, () => {
    let a: TestApp;
    let b: TestApp;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const setup = await backend.setup();
      cleanup = setup.cleanup;
      // The first instance creates the schema; the second starts on it, as in a rolling deploy.
      a = await startTestApp({ env: setup.env, ...(setup.dir ? { dir: setup.dir } : {}) });
      b = await startTestApp({ env: setup.env, dir: setup.dir ?? a.dir });
    });
    afterAll(async () => {
      await b.close();
      await a.close();
      await cleanup();
    });

    it('a token created on one works on the other at once', async () => {
      const user = await signup(a);
      const { token } = await createApiToken(a, user.jwt);
      expect((await me(b, token)).statusCode).toBe(200);
      expect((await me(b, user.jwt)).statusCode).toBe(200);
    });

    it('a revocation on one is seen by the other on its very next request', async () => {
      const user = await signup(a);
      const { id, token } = await createApiToken(a, user.jwt);
      expect((await me(b, token)).statusCode).toBe(200);
      expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(b, token));
    });

    it.each(['/%61pi/me', '/api/%6De', '/%61pi/tokens'])(
      'a revocation on one was missed by the other on %s (an escaped path skipped the catch-up): now refused on the very next request',
      async (path) => {
        const user = await signup(a);
        const { id, token } = await createApiToken(a, user.jwt, { scopes: ['tokens:read'] });
        const get = async () => {
          await nextTurn();
          return json(b, 'GET', path, undefined, token);
        };
        expect((await get()).statusCode).toBe(200);
        expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
        expectInvalidToken(await get());
      },
    );

    it('a logout on one is seen by the other on its very next request', async () => {
      const user = await signup(a);
      expect((await me(b, user.jwt)).statusCode).toBe(200);
      expect((await json(a, 'POST', '/api/auth/logout', undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(b, user.jwt));
    });

    it('deleting an app on one revokes its tokens on the other', async () => {
      const user = await signup(a);
      const app = await registerApp(a, user.jwt);
      expect((await me(b, app.token)).statusCode).toBe(200);
      expect((await json(a, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(b, app.token));
    });

    it('deleting a user on one is seen by the other', async () => {
      const user = await signup(a);
      const { token } = await createApiToken(a, user.jwt);
      expect((await me(b, token)).statusCode).toBe(200);
      expect(await a.services.users.delete(user.id)).toBe(true);
      expectInvalidToken(await me(b, token));
      expectInvalidToken(await me(b, user.jwt));
    });

    it('a key rotation on one is seen by the other: JWKS, new logins, and old tokens after --immediate', async () => {
      const user = await signup(a);
      expect((await me(b, user.jwt)).statusCode).toBe(200);
      const soft = await a.services.keys.rotate();
      expect((await json(b, 'GET', '/.well-known/jwks.json')).json().keys.map((k: { kid: string }) => k.kid)).toContain(soft);
      expect(decodeProtectedHeader(await login(b, user.email)).kid).toBe(soft);
      expect((await me(b, user.jwt)).statusCode).toBe(200);
      const hard = await a.services.keys.rotate({ immediate: true });
      expectInvalidToken(await me(b, user.jwt));
      expect((await json(b, 'GET', '/.well-known/jwks.json')).json().keys.map((k: { kid: string }) => k.kid)).toEqual([hard]);
    });
  });
}

/**
 * Two instances on a fresh PostgreSQL database and one Redis prefix; `bOnly` changes B's
 * environment (e.g. `REDIS_URL: ''` for a process without Redis, as the CLI may be run).
 */
async function twoOnRedis(
  extra: Record<string, string>,
  run: (a: TestApp, b: TestApp, prefix: string) => Promise<void>,
  bOnly: Record<string, string> = {},
): Promise<void> {
  const db = await freshPostgresDatabase();
  const prefix = uniquePrefix();
  const env = { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: prefix, ...extra };
  const a = await startTestApp({ env });
  const b = await startTestApp({ env: { ...env, ...bOnly }, dir: a.dir });
  try {
    await run(a, b, prefix);
  } finally {
    await b.close();
    await a.close();
    await db.drop();
  }
}

describe.skipIf(!(postgresUp && redisUp))('two instances on PostgreSQL and Redis, Redis trouble', () => {
  it('an instance that cannot reach Redis stops trusting its caches, then recovers', () =>
    twoOnRedis({}, async (a, b) => {
      const user = await signup(a);
      const { id, token } = await createApiToken(a, user.jwt);
      expect((await me(b, token)).statusCode).toBe(200);
      // B loses Redis; A revokes and publishes. B cannot hear it, so it must not answer from cache.
      b.services.redis?.disconnect();
      expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(b, token));
      expect((await me(b, user.jwt)).statusCode).toBe(200);
      // Back online: caching resumes and later revocations still arrive.
      await b.services.redis?.connect();
      const second = await createApiToken(a, user.jwt);
      expect((await me(b, second.token)).statusCode).toBe(200);
      expect((await json(a, 'DELETE', `/api/tokens/${second.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(b, second.token));
    }));

  it('after Redis lost its data, an instance does not keep serving a token revoked meanwhile (the counter came back to the value it had seen)', () =>
    twoOnRedis({}, async (a, b, prefix) => {
      const redis = new Redis(REDIS_URL);
      try {
        const user = await signup(a);
        const { id, token } = await createApiToken(a, user.jwt);
        expect((await me(b, token)).statusCode).toBe(200);
        const seen = await redis.get(`${prefix}changes:seq`);
        // FLUSHDB, as far as this deployment's keys go (other tests share the server).
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
        await redis.set(`${prefix}changes:seq`, seen ?? '0');
        expectInvalidToken(await me(b, token));
      } finally {
        redis.disconnect();
      }
    }));

  it('a revocation whose announcement failed reaches the other instance within the poll interval', () =>
    twoOnRedis({ CHANGES_POLL_MS: '200' }, async (a, b) => {
      const user = await signup(a);
      const { id, token } = await createApiToken(a, user.jwt);
      expect((await me(b, token)).statusCode).toBe(200);
      a.services.redis?.disconnect();
      expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(a, token));
      await untilRefused(b, token, 5000);
    }));

  it('a change made without Redis (the CLI without REDIS_URL) reaches the instances on Redis within the poll interval', () =>
    twoOnRedis(
      { CHANGES_POLL_MS: '200' },
      async (a, withoutRedis) => {
        const user = await signup(a);
        expect((await me(a, user.jwt)).statusCode).toBe(200);
        await withoutRedis.services.keys.rotate({ immediate: true });
        await untilRefused(a, user.jwt, 5000);
      },
      { REDIS_URL: '' },
    ));

  it('rate limits are shared', () =>
    twoOnRedis({ RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '3/60' }, async (a, b) => {
      const statuses = [];
      for (const t of [a, b, a, b]) statuses.push((await json(t, 'GET', '/.well-known/jwks.json')).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
    }));
});
