import { afterEach, describe, expect, it } from 'vitest';
import { expectRefused, signupAndToken, status } from '../helpers/process-api.js';
import { request, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { scaleOutEnv } from '../helpers/scale-out.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';

/**
 * The token lifecycle across real processes on one PostgreSQL and one Redis: a narrowing made on
 * one instance holds on the other's very next request, and a rotation's grace ends on both by
 * time alone, with no request or change to set it off.
 */
const servers: ServerProcess[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env, 30_000);
  servers.push(server);
  return server;
}

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('token lifecycle on two server processes', () => {
  const env = scaleOutEnv();

  it('a narrowing on instance B is seen on the next request on instance A', async () => {
    const a = await start(env);
    const b = await start(env);
    const user = await signupAndToken(a.url);
    const created = await request(a.url, 'POST', '/api/tokens', { token: user.jwt, body: { name: 'narrow me', scopes: ['apps:read'] } });
    const { id, token } = created.body as { id: string; token: string };
    // Both instances have the token cached, with its scope.
    expect((await request(a.url, 'GET', '/api/apps', { token })).status).toBe(200);
    expect((await request(b.url, 'GET', '/api/apps', { token })).status).toBe(200);

    expect((await request(b.url, 'PATCH', `/api/tokens/${id}`, { token: user.jwt, body: { scopes: [] } })).status).toBe(200);
    expect((await request(a.url, 'GET', '/api/apps', { token })).status).toBe(403);
    expect(await status(a.url, token)).toBe(200);

    // The test client is on loopback: a list without it refuses the token on A at once.
    expect((await request(b.url, 'PATCH', `/api/tokens/${id}`, { token: user.jwt, body: { allowed_cidrs: ['192.0.2.0/24'] } })).status).toBe(200);
    await expectRefused(a.url, token);
  });

  it('a rotation grace ends on both instances within a second of its time, with no request to set it off', async () => {
    const a = await start(env);
    const b = await start(env);
    const user = await signupAndToken(a.url);
    // Both instances cache the old token before the rotation and the change that follows it.
    expect(await status(a.url, user.token)).toBe(200);
    expect(await status(b.url, user.token)).toBe(200);
    const rotated = await request(a.url, 'POST', `/api/tokens/${user.tokenId}/rotate`, { token: user.jwt, body: { grace_seconds: 3 } });
    expect(rotated.status).toBe(201);
    const fresh = (rotated.body as { token: string }).token;
    const detail = await request(b.url, 'GET', `/api/tokens/${user.tokenId}`, { token: user.jwt });
    const end = Date.parse((detail.body as { expires_at: string }).expires_at);
    expect(await status(a.url, user.token)).toBe(200);
    expect(await status(b.url, user.token)).toBe(200);

    // Nothing is sent until the grace's end (timers may fire a millisecond early, hence the 20):
    // whatever refuses the token then was decided by time.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, end + 20 - Date.now())));
    const answers = await Promise.all([status(a.url, user.token), status(b.url, user.token)]);
    const answeredAt = Date.now();
    expect(answers).toEqual([401, 401]);
    expect(answeredAt - end).toBeLessThan(1000);
    expect(await status(a.url, fresh)).toBe(200);
    expect(await status(b.url, fresh)).toBe(200);
  });
});
