import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, iso } from '../../src/clock.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { openEvents } from '../helpers/event-stream.js';
import { registryOf, samples, total } from '../helpers/metrics.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';
import { freePort } from '../helpers/server-process.js';

/** What moved between two reads of the registry, for one series. */
async function moved(t: TestApp, metric: string, labels: Record<string, string>, act: () => Promise<unknown>): Promise<number> {
  const before = total(await samples(registryOf(t)), metric, labels);
  await act();
  return total(await samples(registryOf(t)), metric, labels) - before;
}

/** Each gauge's value as a scrape computes it. */
async function gauge(t: TestApp, metric: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const found = (await samples(registryOf(t))).filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : total(found, metric);
}

describe('what the background loops count, and the gauges', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  let receiver: Server;
  let base: string;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(req.url === '/fail' ? 500 : 204).end());
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ clock, env: { METRICS_ADDR: '127.0.0.1:9464', WEBHOOK_ALLOW_PRIVATE: 'true', TOKEN_IDLE_REVOKE_DAYS: '30' } });
    user = await signup(t);
  });
  afterAll(async () => {
    await t.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  it('counts a delivered webhook as success, a refused one as failure, and reads the queue when scraped', async () => {
    const hook = await json(t, 'POST', '/api/webhooks', { url: `${base}/ok`, event_types: ['token.created'] }, user.jwt);
    expect(hook.statusCode, hook.body).toBe(201);
    await createApiToken(t, user.jwt);
    await t.services.webhookDelivery.dispatcher.runOnce();
    expect(await gauge(t, 'rz_webhook_queue_depth')).toBe(1);
    expect(await moved(t, 'rz_webhook_deliveries_total', { outcome: 'success' }, () => t.services.webhookDelivery.runOnce())).toBe(1);
    expect(await gauge(t, 'rz_webhook_queue_depth')).toBe(0);

    const failing = await json(t, 'POST', '/api/webhooks', { url: `${base}/fail`, event_types: ['token.revoked'] }, user.jwt);
    expect(failing.statusCode, failing.body).toBe(201);
    const { id } = await createApiToken(t, user.jwt);
    await json(t, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt);
    expect(await moved(t, 'rz_webhook_deliveries_total', { outcome: 'failure' }, () => t.services.webhookDelivery.runOnce())).toBe(1);
  });

  it('counts tokens the sweeps end, by reason', async () => {
    await createApiToken(t, user.jwt, { expires_at: iso(clock.now() + DAY_MS) });
    const rotated = await createApiToken(t, user.jwt);
    expect((await json(t, 'POST', `/api/tokens/${rotated.id}/rotate`, { grace_seconds: 60 }, user.jwt)).statusCode).toBe(201);
    clock.advance(2 * DAY_MS);
    const sweep = () => t.services.maintenance.runOnce();
    const before = await samples(registryOf(t));
    await sweep();
    const after = await samples(registryOf(t));
    const delta = (reason: string) => total(after, 'rz_tokens_revoked_total', { reason }) - total(before, 'rz_tokens_revoked_total', { reason });
    expect(delta('expired')).toBe(1);
    expect(delta('rotation')).toBe(1);
    clock.advance(31 * DAY_MS);
    // Every token of the user left unused (the rotated one's replacement among them) is idle now.
    expect(await moved(t, 'rz_tokens_revoked_total', { reason: 'idle' }, sweep)).toBeGreaterThanOrEqual(1);
  });

  it('reads the signing keys, the store, the hash queue and the streams when scraped; no rz_redis_up without Redis', async () => {
    expect(await gauge(t, 'rz_signing_keys', { state: 'active' })).toBe(1);
    expect(await gauge(t, 'rz_signing_keys', { state: 'retired' })).toBe(0);
    await t.services.keys.rotate();
    expect(await gauge(t, 'rz_signing_keys', { state: 'retired' })).toBe(1);
    expect(await gauge(t, 'rz_store_up')).toBe(1);
    expect(await gauge(t, 'rz_password_hash_queue_depth')).toBe(0);
    expect(await gauge(t, 'rz_event_streams_open')).toBe(0);
    expect(await gauge(t, 'rz_redis_up')).toBeUndefined();
  });
});

describe('events written to the streams', () => {
  let server: RealServer;
  beforeAll(async () => {
    server = await startRealServer({ METRICS_ADDR: `127.0.0.1:${await freePort()}` });
  });
  afterAll(() => server.close());

  it('count once per event, and the open streams are read when scraped', async () => {
    const user = await signup(server);
    const service = await createService(server);
    const [a, b] = [await openEvents(server.url, service.token), await openEvents(server.url, service.token)];
    try {
      await Promise.all([a.next(), b.next()]);
      expect(await gauge(server, 'rz_event_streams_open')).toBe(2);
      const { id } = await createApiToken(server, user.jwt);
      const published = await moved(server, 'rz_events_published_total', { type: 'token.revoked' }, async () => {
        await json(server, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt);
        await Promise.all([a.nextEvent(), b.nextEvent()]);
      });
      expect(published).toBe(1);
    } finally {
      a.close();
      b.close();
    }
  });
});
