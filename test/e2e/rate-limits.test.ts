import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { tempDir } from '../helpers/app.js';
import { PASSWORD } from '../helpers/api.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

/** Real servers on loopback ports, driven with real parallel HTTP requests. */
const running: Array<{ server: RunningServer; remove: () => void }> = [];
afterEach(async () => {
  for (const { server, remove } of running.splice(0)) {
    await server.close();
    remove();
  }
});

async function serve(env: Record<string, string>, dir = tempDir()): Promise<{ url: string; dir: string }> {
  const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(dir.dir, 'rz.db')}`, LOG_LEVEL: 'silent', ...env });
  const server = await startServer(config);
  running.push({ server, remove: dir.remove });
  return { url: server.url, dir: dir.dir };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function signupJwt(base: string): Promise<string> {
  const res = await post(`${base}/api/auth/signup`, { email: 'par@example.com', username: 'par_user', password: PASSWORD });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

/** Fires all requests at once and counts the statuses. */
async function burst(n: number, send: (i: number) => Promise<Response>): Promise<Record<number, number>> {
  const responses = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const counts: Record<number, number> = {};
  for (const r of responses) {
    counts[r.status] = (counts[r.status] ?? 0) + 1;
    await r.arrayBuffer();
  }
  return counts;
}

describe('exact limits under parallel HTTP requests', () => {
  it('N parallel requests against a credential limit of L admit exactly L', async () => {
    const { url } = await serve({ RATE_LIMIT_CREDENTIAL: '10/60' });
    const jwt = await signupJwt(url);
    const counts = await burst(60, () => fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${jwt}` } }));
    expect(counts).toEqual({ 200: 10, 429: 50 });
  });

  it('parallel logins for one email admit exactly the login-email limit', async () => {
    const { url } = await serve({ RATE_LIMIT_LOGIN_EMAIL: '5/600', RATE_LIMIT_LOGIN_ADDRESS: '1000/60' });
    const counts = await burst(40, () => post(`${url}/api/auth/login`, { email: 'victim@example.com', password: 'guess guess guess' }));
    expect(counts).toEqual({ 401: 5, 429: 35 });
  });
});

const redisUp = await redisAvailable();

describe.skipIf(!redisUp)('with Redis', () => {
  it('two instances share one limit', async () => {
    const shared = { REDIS_URL, REDIS_PREFIX: uniquePrefix(), RATE_LIMIT_ADDRESS: '7/60' };
    const a = await serve(shared);
    const b = await serve(shared);
    const counts = await burst(30, (i) => fetch(`${i % 2 === 0 ? a.url : b.url}/.well-known/jwks.json`));
    expect(counts).toEqual({ 200: 7, 429: 23 });
  });

  it('when Redis is unreachable, login fails closed (503) and authenticated requests go on', async () => {
    const dir = tempDir();
    // First on a working Redis to get a token, then restart on the same database with Redis gone.
    const first = await serve({ REDIS_URL, REDIS_PREFIX: uniquePrefix() }, { dir: dir.dir, remove: () => {} });
    const jwt = await signupJwt(first.url);
    const { url } = await serve({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_CREDENTIAL: '100/60' }, dir);
    const login = await post(`${url}/api/auth/login`, { email: 'par@example.com', password: PASSWORD });
    expect(login.status).toBe(503);
    expect(((await login.json()) as { code: string }).code).toBe('unavailable');
    expect(login.headers.get('retry-after')).toBe('5');
    const me = await fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('ratelimit-policy')).toBe('"credential";q=100;w=60');
  });
});
