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

describe.skipIf(!(postgresUp && redisUp))('two instances on PostgreSQL and Redis, Redis trouble', () => {
  it('an instance that cannot reach Redis stops trusting its caches, then recovers', async () => {
    const db = await freshPostgresDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix() };
    const a = await startTestApp({ env });
    const b = await startTestApp({ env, dir: a.dir });
    try {
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
    } finally {
      await b.close();
      await a.close();
      await db.drop();
    }
  });

  it('rate limits are shared', async () => {
    const db = await freshPostgresDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix(), RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '3/60' };
    const a = await startTestApp({ env });
    const b = await startTestApp({ env, dir: a.dir });
    try {
      const statuses = [];
      for (const t of [a, b, a, b]) statuses.push((await json(t, 'GET', '/.well-known/jwks.json')).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await b.close();
      await a.close();
      await db.drop();
    }
  });
});
