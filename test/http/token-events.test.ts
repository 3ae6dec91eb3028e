import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';

/** The token lifecycle on GET /api/events: what a verifier's cache hears of narrowing and rotation. */
describe('token lifecycle events', () => {
  let server: RealServer;
  let user: TestUser;
  let service: { id: string; token: string };
  const readers: EventReader[] = [];
  const open = async () => {
    const reader = await openEvents(server.url, service.token, {});
    readers.push(reader);
    await reader.next();
    return reader;
  };

  beforeAll(async () => {
    server = await startRealServer({});
    user = await signup(server);
    service = await createService(server);
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  afterAll(() => server.close());

  const next = async (reader: EventReader) => {
    const event = await reader.nextEvent();
    return { event: event.event, data: JSON.parse(event.data ?? '') as unknown };
  };

  it('a narrowing sends token.updated with the new scopes', async () => {
    const reader = await open();
    const created = await createApiToken(server, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
    expect((await json(server, 'PATCH', `/api/tokens/${created.id}`, { scopes: ['tokens:read'] }, user.jwt)).statusCode).toBe(200);
    expect(await next(reader)).toEqual({ event: 'token.updated', data: { token_id: created.id, scopes: ['tokens:read'] } });
  });

  it('a rotation without grace sends token.revoked; with a grace, token.updated so verifiers learn the new expiry', async () => {
    const reader = await open();
    const now = await createApiToken(server, user.jwt);
    expect((await json(server, 'POST', `/api/tokens/${now.id}/rotate`, {}, user.jwt)).statusCode).toBe(201);
    expect(await next(reader)).toEqual({ event: 'token.revoked', data: { token_id: now.id, token_type: 'api_token', user_id: user.id } });
    const later = await createApiToken(server, user.jwt, { scopes: ['apps:read'] });
    expect((await json(server, 'POST', `/api/tokens/${later.id}/rotate`, { grace_seconds: 600 }, user.jwt)).statusCode).toBe(201);
    expect(await next(reader)).toEqual({ event: 'token.updated', data: { token_id: later.id, scopes: ['apps:read'] } });
  });
});
