import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore } from '../../src/changes/store.js';
import { createApiToken, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { type EventReader, openEvents } from '../helpers/event-stream.js';
import { metricsEnv, sampleCount, valueOf } from '../helpers/metrics.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';

/**
 * Issue 50, contract §10.3: revocation propagation and event delivery lag measured from the commit
 * time each change carries, and the commit time on every event of GET /api/events.
 */
const PROPAGATION = 'rz_revocation_propagation_seconds';
const LAG = 'rz_event_delivery_lag_seconds';

describe('revocation propagation on one instance, metrics on', () => {
  let server: RealServer;
  let user: TestUser;
  let service: { id: string; token: string };
  const readers: EventReader[] = [];
  beforeAll(async () => {
    server = await startRealServer(await metricsEnv());
    user = await signup(server);
    service = await createService(server);
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  afterAll(() => server.close());
  const metrics = () => server.services.metrics;

  it('one sample per revocation, on the instance that made it; none for a change that revokes nothing', async () => {
    const before = await sampleCount(metrics(), PROPAGATION);
    const tokens = [await createApiToken(server, user.jwt), await createApiToken(server, user.jwt)];
    const narrowed = await createApiToken(server, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
    expect((await json(server, 'PATCH', `/api/tokens/${narrowed.id}`, { scopes: ['apps:read'] }, user.jwt)).statusCode).toBe(200);
    expect(await sampleCount(metrics(), PROPAGATION)).toBe(before);
    for (const token of tokens) expect((await json(server, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    // Applied before the 204: the instance that revokes refuses the token from its answer on.
    expect(await sampleCount(metrics(), PROPAGATION)).toBe(before + 2);
    const app = await registerApp(server, user.jwt);
    expect((await json(server, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt)).statusCode).toBe(204);
    expect(await sampleCount(metrics(), PROPAGATION)).toBe(before + 3);
  });

  it('every event carries its commit time in a field of its own; data keeps its shape; one lag sample per change, however many streams', async () => {
    const streams = [await openEvents(server.url, service.token), await openEvents(server.url, service.token)];
    readers.push(...streams);
    for (const reader of streams) await reader.next();
    const lagBefore = await sampleCount(metrics(), LAG);
    const token = await createApiToken(server, user.jwt);
    const before = Date.now();
    expect((await json(server, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    for (const reader of streams) {
      const event = await reader.nextEvent();
      expect(event.event).toBe('token.revoked');
      expect(JSON.parse(event.data ?? '')).toEqual({ token_id: token.id, token_type: 'api_token', user_id: user.id });
      expect(event.committed_at).toMatch(/^[0-9]{13}$/);
      expect(Number(event.committed_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Number(event.committed_at)).toBeLessThanOrEqual(Date.now());
      // Before `data`: a parser hands the event over at the blank line, with everything before it.
      expect(reader.text()).toContain(`event: token.revoked\ncommitted_at: ${event.committed_at}\ndata: `);
    }
    expect(await sampleCount(metrics(), LAG)).toBe(lagBefore + 1);
  });

  it('a resumed stream replays the commit times too', async () => {
    const token = await createApiToken(server, user.jwt);
    const after = await new ChangeStore(server.services.database.db).latestId();
    expect((await json(server, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const reader = await openEvents(server.url, service.token, { 'last-event-id': String(after) });
    readers.push(reader);
    const event = await reader.nextEvent();
    expect([event.event, event.committed_at]).toEqual(['token.revoked', expect.stringMatching(/^[0-9]{13}$/)]);
  });

  it('every gap reason is a series from the start, at zero until it happens', async () => {
    for (const reason of ['lost_publish', 'redis_reset', 'resync']) expect(await valueOf(metrics(), 'rz_change_feed_gaps_total', { reason })).toBe(0);
    await new ChangeStore(server.services.database.db).prune('9999-01-01T00:00:00.000Z');
    // The log was pruned, not past this instance's cursor: nothing was missed, no gap.
    await server.services.feed.poll();
    expect(await valueOf(metrics(), 'rz_change_feed_gaps_total', { reason: 'resync' })).toBe(0);
  });
});

describe('metrics off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('no registry, and events still carry their commit time', async () => {
    expect(t.services.metrics).toBeNull();
    const user = await signup(t);
    const token = await createApiToken(t, user.jwt);
    const after = await new ChangeStore(t.services.database.db).latestId();
    expect((await json(t, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const [change] = await new ChangeStore(t.services.database.db).listAfter(after);
    expect(change?.committedAt).toBeGreaterThan(Date.now() - 60_000);
  });
});
