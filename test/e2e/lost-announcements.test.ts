import { once } from 'node:events';
import { createServer, type Socket, connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectRefused, msUntilRefused, signupAndToken, status } from '../helpers/process-api.js';
import { freePort, request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { freshPostgresDatabase, postgresAvailable, REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

/**
 * Real processes on one PostgreSQL and one Redis, with the announcement of a change broken for
 * real: every instance still refuses a revoked token within the poll interval (docs/deployment.md, "The bound
 * on a lost announcement"), because the change is in the database's log, which every instance reads that often.
 */
const POLL_MS = 1000;
/** The bound is one poll interval and a query; the rest is slack for a busy two-core machine. */
const DEADLINE_MS = POLL_MS + 2000;

const servers: ServerProcess[] = [];
const closers: Array<() => void> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
  for (const close of closers.splice(0)) close();
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env, 30_000);
  servers.push(server);
  return server;
}

/** A TCP proxy to Redis that can be cut: an instance behind it loses Redis while the others keep it. */
async function redisProxy(): Promise<{ url: string; cut: () => void }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const url = new URL(REDIS_URL);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  const cut = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  closers.push(cut);
  return { url: url.toString(), cut };
}

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('changes whose announcement was lost, with real processes', () => {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    database = await freshPostgresDatabase();
  });
  afterAll(() => database.drop());

  const envFor = (prefix: string) => ({
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    RATE_LIMITS: 'off',
    CHANGES_POLL_MS: String(POLL_MS),
  });

  it('a revocation on an instance cut off from Redis is refused by every instance within the poll interval', async () => {
    const env = envFor(uniquePrefix());
    const proxy = await redisProxy();
    const a = await start(env);
    const b = await start({ ...env, REDIS_URL: proxy.url });
    const user = await signupAndToken(a.url);
    expect(await status(a.url, user.token)).toBe(200);
    expect(await status(b.url, user.token)).toBe(200);

    proxy.cut();
    expect((await request(b.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt })).status).toBe(204);
    const elapsed = await msUntilRefused(a.url, user.token, DEADLINE_MS);
    expect(elapsed).toBeLessThan(DEADLINE_MS);
    await expectRefused(b.url, user.token);
    expect(await b.outputHas(`change token ${user.tokenId} was committed but not announced`), b.output()).toBe(true);
  });

  it('the CLI without REDIS_URL: users delete and keys rotate --immediate are refused by every instance within the poll interval', async () => {
    const env = envFor(uniquePrefix());
    const a = await start(env);
    const b = await start(env);
    const doomed = await signupAndToken(a.url);
    const user = await signupAndToken(b.url);
    for (const base of [a.url, b.url]) {
      expect(await status(base, doomed.token)).toBe(200);
      expect(await status(base, user.jwt)).toBe(200);
    }
    const withoutRedis = { ...env, REDIS_URL: '' };
    const me = (await request(a.url, 'GET', '/api/me', { token: doomed.jwt })).body as { id: string };

    const deleted = await runCli(['users', 'delete', me.id], withoutRedis);
    expect(deleted.code, deleted.stderr).toBe(0);
    for (const base of [a.url, b.url]) await msUntilRefused(base, doomed.token, DEADLINE_MS);

    const rotated = await runCli(['keys', 'rotate', '--immediate'], withoutRedis);
    expect(rotated.code, rotated.stderr).toBe(0);
    for (const base of [a.url, b.url]) await msUntilRefused(base, user.jwt, DEADLINE_MS);
    expect(await status(b.url, user.token)).toBe(200);
  });

  it('the CLI refuses a change it cannot announce: REDIS_URL set but unreachable, nothing committed', async () => {
    const env = envFor(uniquePrefix());
    const a = await start(env);
    const user = await signupAndToken(a.url);
    const withoutRedis = { ...env, REDIS_URL: '' };
    const keysBefore = await runCli(['keys', 'list'], withoutRedis);

    const refused = await runCli(['keys', 'rotate', '--immediate'], { ...env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Redis at REDIS_URL is not reachable.*nothing was done/);
    expect(refused.stdout).toBe('');
    expect((await runCli(['keys', 'list'], withoutRedis)).stdout).toBe(keysBefore.stdout);
    expect(await status(a.url, user.jwt)).toBe(200);
  });

  it('after Redis lost its data and the counter came back to the value an instance had seen, it does not keep serving a token revoked meanwhile', async () => {
    const prefix = uniquePrefix();
    const env = envFor(prefix);
    const a = await start(env);
    const b = await start(env);
    const redis = new Redis(REDIS_URL);
    closers.push(() => redis.disconnect());
    const user = await signupAndToken(b.url);
    expect(await status(a.url, user.token)).toBe(200);
    const seen = await redis.get(`${prefix}changes:seq`);

    // FLUSHDB as far as this deployment goes (other tests share the server), then a revocation,
    // then the counter driven back to exactly what instance A last read.
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    expect((await request(b.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt })).status).toBe(204);
    await redis.set(`${prefix}changes:seq`, seen ?? '0');
    await expectRefused(a.url, user.token);
  });
});
