import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectRefused, signupAndToken, status } from '../helpers/process-api.js';
import { request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { scaleOutEnv } from '../helpers/scale-out.js';
import { postgresAvailable, redisAvailable, uniquePrefix } from '../helpers/services.js';

/** Real processes: several instances on PostgreSQL and Redis, and `serve --workers` on SQLite. */
const servers: ServerProcess[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env, 30_000);
  servers.push(server);
  return server;
}

async function burst(n: number, send: (i: number) => Promise<Response>): Promise<Record<number, number>> {
  const counts: Record<number, number> = {};
  for (const r of await Promise.all(Array.from({ length: n }, (_, i) => send(i)))) {
    counts[r.status] = (counts[r.status] ?? 0) + 1;
    await r.arrayBuffer();
  }
  return counts;
}

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('two server processes on one PostgreSQL and one Redis', () => {
  const env = scaleOutEnv();

  it('behave as one service: tokens, revocation, logout and CLI key rotation reach both at once', async () => {
    const a = await start(env);
    const b = await start(env);
    const user = await signupAndToken(a.url);
    expect(await status(b.url, user.token)).toBe(200);
    expect(await status(b.url, user.jwt)).toBe(200);

    expect((await request(a.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt })).status).toBe(204);
    await expectRefused(b.url, user.token);

    const other = await signupAndToken(b.url);
    expect(await status(a.url, other.jwt)).toBe(200);
    expect((await request(b.url, 'POST', '/api/auth/logout', { token: other.jwt })).status).toBe(204);
    await expectRefused(a.url, other.jwt);

    const rotated = await runCli(['keys', 'rotate', '--immediate'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    await expectRefused(a.url, user.jwt);
    await expectRefused(b.url, user.jwt);
    expect(await status(b.url, other.token)).toBe(200);
  });

  it('share rate limits: N parallel requests across both admit exactly L', async () => {
    const limited = { ...env, RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '9/60', REDIS_PREFIX: uniquePrefix() };
    const a = await start(limited);
    const b = await start(limited);
    const counts = await burst(40, (i) => fetch(`${i % 2 ? a.url : b.url}/.well-known/jwks.json`));
    expect(counts).toEqual({ 200: 9, 429: 31 });
  });
});

describe('serve --workers 2 on SQLite', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rz-cluster-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every worker sees a revocation on its very next request, and rate limits are shared', async () => {
    const server = await start({ DATABASE_URL: `sqlite:${join(dir, 'rz.db')}`, WORKERS: '2', RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '1000/60' });
    const user = await signupAndToken(server.url);
    // Enough requests that both workers have the token cached.
    for (let i = 0; i < 10; i++) expect(await status(server.url, user.token)).toBe(200);
    expect((await request(server.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt })).status).toBe(204);
    for (let i = 0; i < 10; i++) await expectRefused(server.url, user.token);
  });

  it('N parallel requests across workers admit exactly the credential limit', async () => {
    const server = await start({ DATABASE_URL: `sqlite:${join(dir, 'limits.db')}`, WORKERS: '2', RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '12/60' });
    const user = await signupAndToken(server.url);
    const counts = await burst(50, () => fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${user.jwt}` } }));
    // The token creation in signupAndToken used one request of the user's credential bucket.
    expect(counts).toEqual({ 200: 11, 429: 39 });
  });

  it('workers that could not take the port stayed alive serving nothing (or the primary exited 0): now it gives up, exit 1', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const port = String((taken.address() as AddressInfo).port);
      const res = await runCli(['serve'], { DATABASE_URL: `sqlite:${join(dir, 'taken.db')}`, WORKERS: '2', PORT: port }, '', 25_000);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(`EADDRINUSE 127.0.0.1:${port}`);
      expect(res.stderr).toMatch(/workers crashed \d+ times in a minute; giving up/);
    } finally {
      taken.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM lets in-flight requests finish, then exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rz-shutdown-'));
    try {
      const server = await start({ DATABASE_URL: `sqlite:${join(dir, 'rz.db')}`, RATE_LIMITS: 'off', HASH_CONCURRENCY: '1' });
      // Eight argon2id logins through one hashing slot: about half a second of queued work.
      const inflight = Array.from({ length: 8 }, () =>
        fetch(`${server.url}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'nobody@example.com', password: 'some wrong password' }),
        }).then((r) => r.status),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const code = server.stop('SIGTERM');
      expect(await Promise.all(inflight)).toEqual(Array(8).fill(401));
      expect(await code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a request that reached an instance already shutting down got Fastify's own 503
  // body ({"error":"Service Unavailable",...}), not a problem with a code.
  it('a request that arrives during the shutdown is 503 unavailable as a problem, with Retry-After', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rz-shutdown-'));
    try {
      const server = await start({ DATABASE_URL: `sqlite:${join(dir, 'rz.db')}` });
      const { hostname, port } = new URL(server.url);
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const ended = new Promise((resolve) => socket.once('close', resolve));
      // Half a request when the shutdown begins: its connection is busy, so it is not closed, and
      // the request is routed once its last line arrives.
      socket.write('GET /api/me HTTP/1.1\r\nHost: x\r\n');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const code = server.stop('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 500));
      socket.write('Authorization: Bearer rz_x\r\n\r\n');
      await ended;
      expect(await code).toBe(0);
      const [head, body] = received.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 503 /);
      expect(head).toMatch(/^content-type: application\/problem\+json/im);
      expect(head).toMatch(/^retry-after: 1\r?$/im);
      expect(head).toMatch(/^connection: close\r?$/im);
      expect(JSON.parse(body ?? '')).toMatchObject({ status: 503, code: 'unavailable' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
