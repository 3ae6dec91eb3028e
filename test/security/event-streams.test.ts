import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore, changeTransaction, recordChange } from '../../src/changes/store.js';
import { iso } from '../../src/clock.js';
import { bearer, createApiToken, expectProblem, json, signup } from '../helpers/api.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, rawRequest, startRealServer } from '../helpers/real-server.js';

/**
 * Security family 11, the event stream: hostile Last-Event-ID values, clients that never read,
 * and many streams at once.
 */
describe('GET /api/events under attack', () => {
  let server: RealServer;
  let service: { id: string; token: string };
  const readers: EventReader[] = [];
  beforeAll(async () => {
    server = await startRealServer({ EVENTS_STREAMS_PER_CREDENTIAL: '100' });
    service = await createService(server);
  });
  afterEach(async () => {
    for (const reader of readers.splice(0)) reader.close();
    // Every stream the test opened is gone from the server: none leaks.
    const deadline = Date.now() + 5000;
    while (server.services.events.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.services.events.size).toBe(0);
  });
  afterAll(() => server.close());

  const open = async (token = service.token, headers: Record<string, string> = {}) => {
    const reader = await openEvents(server.url, token, headers);
    readers.push(reader);
    return reader;
  };

  it('a resume whose replay cannot be read (the store failing) cut the connection: now a problem body, and the slot is freed', async () => {
    const db = server.services.database.db;
    await sql`alter table changes rename to changes_away`.execute(db);
    try {
      // Over a connection of its own, closed after the answer, so no later test reuses it.
      const refused = await rawRequest(server.port, `GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${service.token}\r\nLast-Event-ID: 1`);
      expect(refused.status).toBe(500);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 500, code: 'internal' });
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body).not.toMatch(/changes|SQL|no such table/i);
    } finally {
      await sql`alter table changes_away rename to changes`.execute(db);
    }
    expect(server.services.events.size).toBe(0);
  });

  it('a client that closes its sending side ends its stream, as a full close does', async () => {
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.write(`GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${service.token}\r\n\r\n`);
    const deadline = Date.now() + 5000;
    while (!received.includes('\r\n\r\n') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(server.services.events.size).toBe(1);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.end();
    await closed;
    socket.destroy();
  });

  describe('hostile Last-Event-ID values', () => {
    it.each([
      ['not a number', 'abc'],
      ['negative', '-1'],
      ['a fraction', '1.5'],
      ['signed', '+5'],
      ['hexadecimal', '0x10'],
      ['an exponent', '1e3'],
      ['16 digits', '9'.repeat(16)],
      ['huge', '9'.repeat(10_000)],
      ['two ids', '5, 6'],
      ['a space inside', '1 2'],
      ['a token', 'rz_0123456789abcdefghij'],
    ])('%s was 400, which ends an EventSource\'s reconnecting for good: now the stream opens with event: reset at the newest id', async (_what, value) => {
      const reader = await open(service.token, { 'last-event-id': value });
      expect(reader.status).toBe(200);
      expect(reader.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const newest = await new ChangeStore(server.services.database.db).latestId();
      expect(await reader.next()).toMatchObject({ retry: '1000' });
      expect(await reader.nextEvent()).toEqual({ id: String(newest), event: 'reset', data: '{}', comments: [] });
      expect(reader.text()).not.toContain('rz_0123');
    });

    it('the largest id of 15 digits, beyond anything handed out, opens the stream with a reset', async () => {
      const reader = await open(service.token, { 'last-event-id': '999999999999999' });
      expect(reader.status).toBe(200);
      await reader.next();
      expect((await reader.nextEvent()).event).toBe('reset');
    });

    it('an empty Last-Event-ID is no id at all: the stream starts from now', async () => {
      const reader = await open(service.token, { 'last-event-id': '' });
      expect((await reader.next()).id).toMatch(/^\d+$/);
    });

    it('an anonymous or invalid caller is refused before the header is looked at', async () => {
      expectProblem(await server.inject({ method: 'GET', url: '/api/events', headers: { 'last-event-id': 'abc' } }), 401, 'unauthorized');
      expectProblem(await server.inject({ method: 'GET', url: '/api/events', headers: { ...bearer('rzs_nope'), 'last-event-id': 'abc' } }), 401, 'invalid_token');
    });
  });

  it('a client that never reads is disconnected once its queue is full; a client that reads gets every event', async () => {
    const reading = await open();
    await reading.next();
    // A raw connection that sends its request, then never reads a byte.
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(`GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${service.token}\r\n\r\n`);
    const deadline = Date.now() + 5000;
    while (server.services.events.size < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.services.events.size).toBe(2);

    // About 6 MB of events: more than the kernel's socket buffers and the stream's own cap hold.
    const count = 40_000;
    const user = randomUUID();
    await changeTransaction(server.services.database.db, async (trx) => {
      for (let i = 0; i < count; i++) {
        const session = randomUUID();
        await recordChange(trx, 'session', session, iso(Date.now()), { type: 'session.revoked', data: { session_id: session, user_id: user } });
      }
    });
    await server.services.feed.poll();

    const received = () => reading.text().split('event: session.revoked').length - 1;
    const until = Date.now() + 30_000;
    while (received() < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received()).toBe(count);
    expect(server.services.events.size).toBe(1);
    socket.destroy();
    // The server still serves.
    const signedUp = await signup(server);
    expect((await json(server, 'GET', '/api/me', undefined, signedUp.jwt)).statusCode).toBe(200);
  });

  it('holds hundreds of streams, each getting every event, caps them per credential, and keeps answering requests', async () => {
    const others = [await createService(server, 'catalogue'), await createService(server, 'publishing')];
    const streams = [
      ...(await Promise.all(Array.from({ length: 100 }, () => open()))),
      ...(await Promise.all(Array.from({ length: 100 }, () => open(others[0]?.token)))),
      ...(await Promise.all(Array.from({ length: 50 }, () => open(others[1]?.token)))),
    ];
    expect(streams.every((s) => s.status === 200)).toBe(true);
    expect(server.services.events.size).toBe(250);

    const refused = await open();
    expect(refused.status).toBe(429);
    expect(refused.problem).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    const user = await signup(server);
    const { id } = await createApiToken(server, user.jwt);
    const answers = await Promise.all(Array.from({ length: 100 }, () => json(server, 'GET', '/api/me', undefined, user.jwt)));
    expect(answers.every((r) => r.statusCode === 200)).toBe(true);
    expect((await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
    for (const stream of streams) expect(JSON.parse((await stream.nextEvent()).data ?? '').token_id).toBe(id);

    // One closed, one more may open.
    streams[0]?.close();
    const deadline = Date.now() + 5000;
    let again = await open();
    while (again.status === 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await open();
    }
    expect(again.status).toBe(200);
  });
});
