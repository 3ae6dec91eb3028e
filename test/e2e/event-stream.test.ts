import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { signupAndToken } from '../helpers/process-api.js';
import { request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { scaleOutEnv } from '../helpers/scale-out.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';

/**
 * Contract §7: events from every instance reach every stream, through the change feed. Real
 * processes; the instance holding the stream gets no request while the change is made elsewhere,
 * and its poll is set to its longest (5 s), so only the immediate path can be fast.
 */
const POLL_MS = '5000';
/** Well under the poll interval, and generous for a busy two-core machine; the figures are printed. */
const BOUND_MS = 500;
const ROUNDS = 5;

const servers: ServerProcess[] = [];
const readers: EventReader[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env, 30_000);
  servers.push(server);
  return server;
}

async function serviceToken(env: Record<string, string>): Promise<{ id: string; token: string }> {
  const created = await runCli(['services', 'create', 'scoreboard'], env);
  expect(created.code, created.stderr).toBe(0);
  return JSON.parse(created.stdout) as { id: string; token: string };
}

/** A new service credential (through the CLI) and a stream of it open on `server`, past its opening. */
async function streamOn(server: ServerProcess, env: Record<string, string>) {
  const service = await serviceToken(env);
  const reader = await openEvents(server.url, service.token);
  readers.push(reader);
  const position = (await reader.next()).id ?? '';
  return { service, reader, position };
}

/**
 * Revokes tokens through `writer` while `reader` streams from the other instance; returns, per
 * revocation, the milliseconds from sending the DELETE to the event's arrival, and from its 204.
 */
async function delays(writer: ServerProcess, reader: EventReader): Promise<Array<{ fromRequest: number; from204: number }>> {
  const out: Array<{ fromRequest: number; from204: number }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    const user = await signupAndToken(writer.url);
    const sent = performance.now();
    let answered = Infinity;
    const deleted = request(writer.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt }).then((res) => {
      answered = performance.now();
      return res.status;
    });
    const event = await reader.nextEvent(10_000);
    const arrived = performance.now();
    expect(await deleted).toBe(204);
    expect(event.event).toBe('token.revoked');
    expect(JSON.parse(event.data ?? '').token_id).toBe(user.tokenId);
    out.push({ fromRequest: Math.round(arrived - sent), from204: Math.max(0, Math.round(arrived - answered)) });
  }
  return out;
}

const infra = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!infra)('two instances on PostgreSQL and Redis', () => {
  const env = scaleOutEnv({ CHANGES_POLL_MS: POLL_MS });

  it('a revocation on B reaches a stream on A at once, far within the poll interval', async () => {
    const a = await start(env);
    const b = await start(env);
    const { reader } = await streamOn(a, env);
    const measured = await delays(b, reader);
    console.log(`PostgreSQL + Redis, revocation on B to event on A (ms): ${JSON.stringify(measured)}`);
    for (const { fromRequest } of measured) expect(fromRequest).toBeLessThan(BOUND_MS);
  });

  it('a logout on B, and the CLI revoking the stream\'s own credential, reach the stream on A', async () => {
    const a = await start(env);
    const b = await start(env);
    const { service, reader } = await streamOn(a, env);
    const user = await signupAndToken(b.url);
    expect((await request(b.url, 'POST', '/api/auth/logout', { token: user.jwt })).status).toBe(204);
    expect((await reader.nextEvent(BOUND_MS * 4)).event).toBe('session.revoked');
    const revoked = await runCli(['services', 'revoke', service.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    await reader.ended;
    expect((await openEvents(a.url, service.token)).status).toBe(401);
  });

  it('a stream resumed on B after A went away misses nothing', async () => {
    const a = await start(env);
    const b = await start(env);
    const { service, position } = await streamOn(a, env);
    await a.stop('SIGKILL');
    const user = await signupAndToken(b.url);
    expect((await request(b.url, 'DELETE', `/api/tokens/${user.tokenId}`, { token: user.jwt })).status).toBe(204);
    const onB = await openEvents(b.url, service.token, { 'last-event-id': position });
    readers.push(onB);
    expect(JSON.parse((await onB.nextEvent()).data ?? '').token_id).toBe(user.tokenId);
  });
});

describe('two processes on one SQLite file', () => {
  const temp = tempDir();
  afterAll(() => temp.remove());

  it('a revocation made by one reaches a stream on the other at once, far within the poll interval', async () => {
    const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', CHANGES_POLL_MS: POLL_MS };
    const a = await start(env);
    const b = await start(env);
    const { reader } = await streamOn(a, env);
    const measured = await delays(b, reader);
    console.log(`SQLite, revocation in process B to event on A (ms): ${JSON.stringify(measured)}`);
    for (const { fromRequest } of measured) expect(fromRequest).toBeLessThan(BOUND_MS);
  });

  it('SIGTERM ends open streams and exits 0 without waiting for them', async () => {
    const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'shutdown.db')}`, RATE_LIMITS: 'off', SHUTDOWN_TIMEOUT_MS: '30000' };
    const server = await start(env);
    const service = await serviceToken(env);
    const streams = await Promise.all(Array.from({ length: 3 }, () => openEvents(server.url, service.token)));
    readers.push(...streams);
    for (const stream of streams) await stream.next();
    const started = Date.now();
    expect(await server.stop('SIGTERM')).toBe(0);
    await Promise.all(streams.map((s) => s.ended));
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
