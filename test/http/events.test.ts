import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore, changeTransaction, recordChange } from '../../src/changes/store.js';
import { iso } from '../../src/clock.js';
import { createApiToken, expectInvalidToken, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

const redisUp = await redisAvailable();

/** Contract §7, GET /api/events: over real HTTP, since a stream never ends by itself. */
describe('GET /api/events', () => {
  let server: RealServer;
  let user: TestUser;
  let service: { id: string; token: string };
  const readers: EventReader[] = [];
  const open = async (headers: Record<string, string> = {}, token = service.token) => {
    const reader = await openEvents(server.url, token, headers);
    readers.push(reader);
    return reader;
  };
  /** The id the stream starts after, from its opening message. */
  const opened = async (reader: EventReader) => {
    const first = await reader.next();
    expect(first).toMatchObject({ retry: '1000' });
    return Number(first.id);
  };
  const latestId = () => new ChangeStore(server.services.database.db).latestId();

  beforeAll(async () => {
    server = await startRealServer({ EVENTS_HEARTBEAT_MS: '1000' });
    user = await signup(server);
    service = await createService(server);
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  afterAll(() => server.close());

  it('is a text/event-stream that starts after the newest change, and is never cached', async () => {
    const reader = await open();
    expect(reader.status).toBe(200);
    expect(reader.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(reader.headers.get('cache-control')).toBe('no-store');
    expect(await opened(reader)).toBe(await latestId());
  });

  it('sends token.revoked for API and app tokens, with the change log\'s id', async () => {
    const reader = await open();
    await opened(reader);
    const api = await createApiToken(server, user.jwt);
    const app = await registerApp(server, user.jwt);
    expect((await json(server, 'DELETE', `/api/tokens/${api.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const first = await reader.nextEvent();
    expect(first).toMatchObject({ id: String(await latestId()), event: 'token.revoked' });
    expect(JSON.parse(first.data ?? '')).toEqual({ token_id: api.id, token_type: 'api_token', user_id: user.id });
    expect((await json(server, 'DELETE', `/api/tokens/${app.token_id}`, undefined, user.jwt)).statusCode).toBe(204);
    const second = await reader.nextEvent();
    expect(Number(second.id)).toBeGreaterThan(Number(first.id));
    expect(second.event).toBe('token.revoked');
    expect(JSON.parse(second.data ?? '')).toEqual({ token_id: app.token_id, token_type: 'app_token', user_id: user.id, app_id: app.id });
  });

  it('sends session.revoked, app.deleted, user.deleted and keys.changed, in order', async () => {
    const other = await signup(server);
    const session = (await json(server, 'GET', '/api/me', undefined, other.jwt)).json().auth.token_id as string;
    const app = await registerApp(server, other.jwt);
    const reader = await open();
    await opened(reader);
    expect((await json(server, 'POST', '/api/auth/logout', undefined, other.jwt)).statusCode).toBe(204);
    const jwt = await login(server, other.email);
    expect((await json(server, 'DELETE', `/api/apps/${app.id}`, undefined, jwt)).statusCode).toBe(204);
    expect(await server.services.users.delete(other.id)).toBe(true);
    await server.services.keys.rotate();
    const received = [];
    for (let i = 0; i < 4; i++) {
      const message = await reader.nextEvent();
      received.push([message.event, JSON.parse(message.data ?? '')]);
    }
    expect(received).toEqual([
      ['session.revoked', { session_id: session, user_id: other.id }],
      ['app.deleted', { app_id: app.id, user_id: other.id }],
      ['user.deleted', { user_id: other.id }],
      ['keys.changed', {}],
    ]);
  });

  it('sends token.updated when a narrowing is recorded (the lifecycle\'s PATCH records it this way)', async () => {
    const { id } = await createApiToken(server, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
    const reader = await open();
    await opened(reader);
    await changeTransaction(server.services.database.db, (trx) =>
      recordChange(trx, 'token', id, iso(Date.now()), { type: 'token.updated', data: { token_id: id, scopes: ['apps:read'] } }),
    );
    await server.services.feed.committed('token', id);
    const message = await reader.nextEvent();
    expect(message.event).toBe('token.updated');
    expect(JSON.parse(message.data ?? '')).toEqual({ token_id: id, scopes: ['apps:read'] });
  });

  it('fans each event out to every open stream, once each', async () => {
    const streams = await Promise.all(Array.from({ length: 5 }, () => open()));
    for (const reader of streams) await opened(reader);
    const { id } = await createApiToken(server, user.jwt);
    expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
    for (const reader of streams) expect(JSON.parse((await reader.nextEvent()).data ?? '').token_id).toBe(id);
    await json(server, 'GET', '/api/me', undefined, user.jwt);
    for (const reader of streams) expect(reader.text().split('event: token.revoked').length - 1).toBe(1);
  });

  it('a comment line keeps a quiet stream open (every EVENTS_HEARTBEAT_MS, at most 15 s)', async () => {
    const reader = await open();
    await opened(reader);
    const message = await reader.next(5000);
    expect(message).toEqual({ comments: ['keep-alive'] });
  });

  it('a silent stream could not be told from a stalled one: now RZ-Heartbeat-Ms states the interval, and a comment comes within it', async () => {
    const reader = await open();
    expect(reader.headers.get('rz-heartbeat-ms')).toBe('1000');
    await opened(reader);
    // Within the lease a verifier gives it: the interval plus a second.
    expect(await reader.next(2000)).toEqual({ comments: ['keep-alive'] });
  });

  describe('resuming with Last-Event-ID', () => {
    it('replays exactly what followed that id, then goes on live', async () => {
      const before = await latestId();
      const revoked: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { id } = await createApiToken(server, user.jwt);
        expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
        revoked.push(id);
      }
      const reader = await open({ 'last-event-id': String(before + 1) });
      expect(await reader.next()).toEqual({ retry: '1000', comments: [] });
      for (const id of revoked.slice(1)) expect(JSON.parse((await reader.nextEvent()).data ?? '').token_id).toBe(id);
      const { id } = await createApiToken(server, user.jwt);
      expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect(JSON.parse((await reader.nextEvent()).data ?? '').token_id).toBe(id);
    });

    it('from the newest id, replays nothing', async () => {
      const reader = await open({ 'last-event-id': String(await latestId()) });
      expect(await reader.next()).toEqual({ retry: '1000', comments: [] });
      expect(await reader.next(5000)).toEqual({ comments: ['keep-alive'] });
    });

    it('an id the log no longer holds (pruned) gets event: reset first, at the newest id, then live events', async () => {
      const { id: tokenId } = await createApiToken(server, user.jwt);
      expect((await json(server, 'DELETE', `/api/tokens/${tokenId}`, undefined, user.jwt)).statusCode).toBe(204);
      await new ChangeStore(server.services.database.db).prune('9999-01-01T00:00:00.000Z');
      const newest = await latestId();
      const reader = await open({ 'last-event-id': '1' });
      await reader.next();
      expect(await reader.nextEvent()).toEqual({ id: String(newest), event: 'reset', data: '{}', comments: [] });
      const { id } = await createApiToken(server, user.jwt);
      expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect((await reader.nextEvent()).event).toBe('token.revoked');
    });

    // Regression: 400 events of 1 KB each (tokens with many platform scopes, narrowed one by one)
    // were queued at once, past the 256 KiB a client may have waiting: the stream was cut before
    // its first byte, and again on every retry with the same id, so the client never caught up.
    it('a replay too large to queue at once gets event: reset at the newest id instead, then live events', async () => {
      const before = await latestId();
      const scopes = Array.from({ length: 40 }, (_, i) => `games:scope-${String(i).padStart(12, '0')}`);
      await changeTransaction(server.services.database.db, async (trx) => {
        for (let i = 0; i < 400; i++) {
          const id = randomUUID();
          await recordChange(trx, 'token', id, iso(Date.now()), { type: 'token.updated', data: { token_id: id, scopes } });
        }
      });
      const newest = await latestId();
      const reader = await open({ 'last-event-id': String(before) });
      expect(reader.status).toBe(200);
      await reader.next();
      expect(await reader.nextEvent()).toEqual({ id: String(newest), event: 'reset', data: '{}', comments: [] });
      const { id } = await createApiToken(server, user.jwt);
      expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect(JSON.parse((await reader.nextEvent()).data ?? '').token_id).toBe(id);
      // Positive control: the last 50 of them fit, and are replayed.
      const recent = await open({ 'last-event-id': String(newest - 50) });
      await recent.next();
      for (let i = 0; i < 50; i++) expect((await recent.nextEvent()).event).toBe('token.updated');
    });

    it('an id beyond any the log has handed out gets event: reset first', async () => {
      const reader = await open({ 'last-event-id': String((await latestId()) + 1000) });
      await reader.next();
      expect(await reader.nextEvent()).toMatchObject({ id: String(await latestId()), event: 'reset' });
    });
  });

  it('a change without an event (recorded by an older version) reaches the streams as a reset', async () => {
    const reader = await open();
    await opened(reader);
    await changeTransaction(server.services.database.db, (trx) => recordChange(trx, 'token', randomUUID(), iso(Date.now()), null));
    await server.services.feed.poll();
    expect(await reader.nextEvent()).toEqual({ id: String(await latestId()), event: 'reset', data: '{}', comments: [] });
  });

  it('a revoked service credential\'s streams end at once; reconnecting is 401', async () => {
    const doomed = await createService(server, 'doomed');
    const reader = await open({}, doomed.token);
    const bystander = await open();
    await opened(reader);
    await opened(bystander);
    expect(await server.services.serviceCredentials.revoke(doomed.id)).toBe(true);
    await reader.ended;
    expect((await open({}, doomed.token)).status).toBe(401);
    expectInvalidToken(await server.inject({ method: 'GET', url: '/api/events', headers: { authorization: `Bearer ${doomed.token}` } }));
    expect(await bystander.next(5000)).toEqual({ comments: ['keep-alive'] });
  });

  it('HEAD is 405: it would open a stream that sends nothing', async () => {
    const res = await fetch(`${server.url}/api/events`, { method: 'HEAD', headers: { authorization: `Bearer ${service.token}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('GET /api/events on shutdown', () => {
  it('ends every stream, so a graceful shutdown does not wait for them', async () => {
    const server = await startRealServer({ SHUTDOWN_TIMEOUT_MS: '60000' });
    const service = await createService(server);
    const readers = await Promise.all(Array.from({ length: 3 }, () => openEvents(server.url, service.token)));
    for (const reader of readers) await reader.next();
    const started = Date.now();
    await server.close();
    await Promise.all(readers.map((r) => r.ended));
    // Streams left open would hold close() until they ended by themselves: never, here.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('GET /api/events when the database is restored from a backup', () => {
  it('streams then dropped every event until ids passed their old high point (a revoked token stayed cached by services): now they end, and reconnecting hears every new event', async () => {
    const server = await startRealServer();
    const { db, dialect } = server.services.database;
    const store = new ChangeStore(db);
    try {
      const user = await signup(server);
      const service = await createService(server);
      const backup = await store.latestId();
      const before = await openEvents(server.url, service.token);
      await before.next();
      for (let i = 0; i < 3; i++) {
        const { id } = await createApiToken(server, user.jwt);
        expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
        expect(await before.nextEvent()).toMatchObject({ event: 'token.revoked' });
      }
      const high = await store.latestId();
      // The restore: the log, and its id sequence, as they were at the backup.
      await db.deleteFrom('changes').where('id', '>', backup).execute();
      if (dialect === 'sqlite') await sql`update sqlite_sequence set seq = ${backup} where name = 'changes'`.execute(db);
      else await sql`select setval(pg_get_serial_sequence('changes', 'id'), ${backup})`.execute(db);
      // The next request makes this instance read the log.
      const victim = await createApiToken(server, user.jwt);
      await before.ended;
      const resumed = await openEvents(server.url, service.token, { 'last-event-id': String(high) });
      expect(await resumed.next()).toMatchObject({ retry: '1000' });
      expect((await resumed.nextEvent()).event).toBe('reset');
      const fresh = await openEvents(server.url, service.token);
      await fresh.next();
      expect((await json(server, 'DELETE', `/api/tokens/${victim.id}`, undefined, user.jwt)).statusCode).toBe(204);
      for (const reader of [resumed, fresh]) {
        const event = await reader.nextEvent();
        expect([event.event, JSON.parse(event.data ?? '{}').token_id]).toEqual(['token.revoked', victim.id]);
        expect(Number(event.id)).toBeLessThanOrEqual(high);
        reader.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!redisUp)('GET /api/events when Redis loses its data', () => {
  it('streams hear one event: reset per loss, before the events that follow it', async () => {
    const prefix = uniquePrefix();
    const server = await startRealServer({ REDIS_URL, REDIS_PREFIX: prefix });
    const redis = new Redis(REDIS_URL);
    // FLUSHDB, as far as this deployment's keys go (other tests share the server).
    const flush = async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    };
    try {
      const user = await signup(server);
      const service = await createService(server);
      const reader = await openEvents(server.url, service.token);
      await reader.next();
      // No request reaches this instance: the feed, watched while a stream is open, notices by itself.
      await flush();
      expect((await reader.nextEvent()).event).toBe('reset');
      await flush();
      const { id } = await createApiToken(server, user.jwt);
      expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect(await reader.nextEvent()).toMatchObject({ event: 'token.revoked' });
      await flush();
      expect((await reader.nextEvent()).event).toBe('reset');
      reader.close();
    } finally {
      redis.disconnect();
      await server.close();
    }
  });
});

describe('GET /api/events and the service rate limit', () => {
  it('a service whose introspections spent its budget could not reopen its event stream (429): openings are now counted apart', async () => {
    const server = await startRealServer({ RATE_LIMITS: 'on', RATE_LIMIT_SERVICE: '3/60' });
    const readers: EventReader[] = [];
    try {
      const service = await createService(server);
      const introspect = () =>
        fetch(`${server.url}/api/introspect`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'token=rz_made_up',
        });
      for (let i = 0; i < 3; i++) expect((await introspect()).status).toBe(200);
      expect((await introspect()).status).toBe(429);
      const stream = await openEvents(server.url, service.token);
      readers.push(stream);
      expect(stream.status).toBe(200);
      expect(stream.headers.get('ratelimit-policy')).toBe('"service";q=3;w=60');
      // Openings have the same quota of their own.
      for (let i = 0; i < 2; i++) {
        const again = await openEvents(server.url, service.token);
        readers.push(again);
        expect(again.status).toBe(200);
      }
      const refused = await openEvents(server.url, service.token);
      readers.push(refused);
      expect(refused.status).toBe(429);
      expect((await introspect()).status).toBe(429);
    } finally {
      for (const reader of readers) reader.close();
      await server.close();
    }
  });
});
