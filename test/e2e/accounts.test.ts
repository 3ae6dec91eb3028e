import { afterEach, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { expectRefused, signupAndToken, status } from '../helpers/process-api.js';
import { request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { scaleOutEnv } from '../helpers/scale-out.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';

/**
 * Contract §8, Accounts, across real processes on one PostgreSQL and one Redis: what one instance
 * does to a user's sessions or account, the other refuses on its very next request, with the
 * events on the stream of a platform service connected to the other instance.
 */
const servers: ServerProcess[] = [];
const readers: EventReader[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
});

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('accounts across two instances on PostgreSQL and Redis', () => {
  // A long poll: only the announcement through Redis can make the next request see the change.
  const env = scaleOutEnv({ CHANGES_POLL_MS: '5000' });

  async function start(): Promise<ServerProcess> {
    const server = await spawnServer(env, 30_000);
    servers.push(server);
    return server;
  }

  async function loginOn(base: string, email: string, password = PASSWORD): Promise<string> {
    const res = await request(base, 'POST', '/api/auth/login', { body: { email, password } });
    expect(res.status).toBe(200);
    return (res.body as { token: string }).token;
  }

  async function eventsOn(server: ServerProcess): Promise<EventReader> {
    const created = await runCli(['services', 'create', 'watcher'], env);
    expect(created.code, created.stderr).toBe(0);
    const reader = await openEvents(server.url, (JSON.parse(created.stdout) as { token: string }).token);
    readers.push(reader);
    await reader.next();
    return reader;
  }

  it("a password change on B ends the other session: A refuses its JWT on the next request, and A's stream says so", async () => {
    const a = await start();
    const b = await start();
    const user = await signupAndToken(a.url);
    const onB = await loginOn(b.url, user.email);
    // Both sessions verified and cached on A.
    expect(await status(a.url, user.jwt)).toBe(200);
    expect(await status(a.url, onB)).toBe(200);
    const stream = await eventsOn(a);

    const changed = await request(b.url, 'POST', '/api/auth/password', {
      token: onB,
      body: { current_password: PASSWORD, new_password: 'a new and much longer passphrase' },
    });
    expect(changed.status).toBe(204);
    await expectRefused(a.url, user.jwt);
    expect(await status(a.url, onB)).toBe(200);
    const event = await stream.nextEvent(5000);
    expect(event.event).toBe('session.revoked');
    expect(JSON.parse(event.data ?? '{}')).toMatchObject({ user_id: expect.any(String) });
  });

  it('ending a session on A is seen by B at once; deleting the account on B, by A', async () => {
    const a = await start();
    const b = await start();
    const user = await signupAndToken(a.url);
    const second = await loginOn(b.url, user.email);
    expect(await status(b.url, user.jwt)).toBe(200);
    const listed = await request(a.url, 'GET', '/api/auth/sessions', { token: user.jwt });
    const other = (listed.body as { sessions: Array<{ id: string; current: boolean }> }).sessions.find((s) => !s.current);
    expect(other).toBeDefined();
    expect((await request(a.url, 'DELETE', `/api/auth/sessions/${other?.id ?? ''}`, { token: user.jwt })).status).toBe(204);
    await expectRefused(b.url, second);

    // API token and user token cached on A, then the account goes on B.
    expect(await status(a.url, user.token)).toBe(200);
    expect(await status(a.url, user.jwt)).toBe(200);
    expect((await request(b.url, 'DELETE', '/api/me', { token: user.jwt, body: { password: PASSWORD } })).status).toBe(204);
    await expectRefused(a.url, user.token);
    await expectRefused(a.url, user.jwt);
  });
});
