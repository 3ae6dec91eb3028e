import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import type { DeliveryJson } from '../helpers/webhooks.js';
import { WebhookQueue } from '../../src/webhooks/queue.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}


/**
 * Contract §9: events reach a real local receiver (WEBHOOK_ALLOW_PRIVATE=true), signed, for their
 * owner's endpoints only, and a failed attempt is retried and shown with its attempts. The
 * dispatcher and worker are driven round by round, on a clock the test moves.
 */
describe('webhook delivery to a real receiver', () => {
  let t: TestApp;
  let receiver: Server;
  let base: string;
  const clock = new TestClock(Date.now());
  const received: Received[] = [];
  /** Statuses to answer, in order, per path; 204 once they run out. */
  const answers = new Map<string, number[]>();

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        // A path under /hold is never answered: its sender has to give up.
        if (!path.startsWith('/hold')) res.writeHead(answers.get(path)?.shift() ?? 204).end('ok');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_SECONDS: '5' }, clock });
  });
  afterAll(async () => {
    await t.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  const addEndpoint = async (user: TestUser, path: string, eventTypes: string[]) => {
    const res = await json(t, 'POST', '/api/webhooks', { url: `${base}${path}`, event_types: eventTypes }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; secret: string };
  };
  const deliveries = async (user: TestUser, id: string) =>
    ((await json(t, 'GET', `/api/webhooks/${id}/deliveries`, undefined, user.jwt)).json() as { deliveries: DeliveryJson[] }).deliveries;
  const at = (path: string) => received.filter((r) => r.path === path);
  /** Verifies with the standardwebhooks package, an implementation independent of ours. */
  const verified = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) });

  it("delivers token.created, token.revoked and token.leaked of the endpoint's owner only, signed, as GET /api/audit shows them", async () => {
    const [ada, bob] = [await signup(t), await signup(t)];
    clock.advance(1000);
    const hook = await addEndpoint(ada, '/ada', ['token.created', 'token.revoked', 'token.leaked']);
    clock.advance(1000);
    const kept = await createApiToken(t, ada.jwt);
    const revoked = await createApiToken(t, ada.jwt);
    expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, ada.jwt)).statusCode).toBe(204);
    expect((await json(t, 'POST', '/api/tokens/leaked', { tokens: [kept.token] })).statusCode).toBe(202);
    await createApiToken(t, bob.jwt);

    await t.services.webhookDelivery.runOnce();
    const got = at('/ada');
    expect(got.map((r) => (JSON.parse(r.body) as { type: string }).type).sort()).toEqual(['token.created', 'token.created', 'token.leaked', 'token.revoked']);
    const audit = ((await json(t, 'GET', '/api/audit?limit=20', undefined, ada.jwt)).json() as { events: Array<{ id: string; occurred_at: string }> }).events;
    for (const r of got) {
      expect(verified(hook.secret, r)).toBeTruthy();
      expect(r.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': expect.stringMatching(/^rz-auth-webhooks\//) });
      const body = JSON.parse(r.body) as { type: string; timestamp: string; data: { id: string } };
      const event = audit.find((e) => e.id === body.data.id);
      expect(body).toEqual({ type: body.type, timestamp: event?.occurred_at, data: event });
    }
    // A signature made with another secret, or over other bytes, does not verify.
    const [first] = got;
    if (first) expect(() => verified(hook.secret, { ...first, body: first.body.replace('token', 'tokem') })).toThrow();
    const listed = await deliveries(ada, hook.id);
    expect(listed.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set(listed.map((d) => d.id)));
    // Nothing more to send: another round sends nothing.
    await t.services.webhookDelivery.runOnce();
    expect(at('/ada')).toHaveLength(4);
  });

  it('an endpoint that chose webhook.created receives its own, and no event from before it was added', async () => {
    const user = await signup(t);
    await addEndpoint(user, '/older', ['token.created']);
    await createApiToken(t, user.jwt);
    clock.advance(1000);
    const hook = await addEndpoint(user, '/self', ['webhook.created', 'token.created']);
    await t.services.webhookDelivery.runOnce();
    const got = at('/self').map((r) => JSON.parse(r.body) as { type: string; data: { subject: { id: string } } });
    expect(got.map((e) => [e.type, e.data.subject.id])).toEqual([['webhook.created', hook.id]]);
    expect(at('/older')).toHaveLength(1);
  });

  it('retries after a 500 within a minute, with the same webhook-id, and shows every attempt', async () => {
    const user = await signup(t);
    const hook = await addEndpoint(user, '/flaky', ['token.created']);
    answers.set('/flaky', [500, 503]);
    clock.advance(1000);
    await createApiToken(t, user.jwt);

    await t.services.webhookDelivery.runOnce();
    let [delivery] = await deliveries(user, hook.id);
    expect(delivery).toMatchObject({ status: 'pending', finished_at: null, attempts: [{ status_code: 500, error: null }] });
    const wait = Date.parse(delivery?.next_attempt_at ?? '') - clock.now();
    expect(wait).toBeGreaterThanOrEqual(4000);
    expect(wait).toBeLessThanOrEqual(6000);
    // Not due yet: nothing is sent.
    await t.services.webhookDelivery.runOnce();
    expect(at('/flaky')).toHaveLength(1);

    clock.advance(wait);
    await t.services.webhookDelivery.runOnce();
    [delivery] = await deliveries(user, hook.id);
    expect(delivery?.attempts.map((a) => a.status_code)).toEqual([500, 503]);
    const second = Date.parse(delivery?.next_attempt_at ?? '') - clock.now();
    expect(second).toBeGreaterThanOrEqual(48_000);
    expect(second).toBeLessThanOrEqual(72_000);

    clock.advance(second);
    await t.services.webhookDelivery.runOnce();
    [delivery] = await deliveries(user, hook.id);
    expect(delivery).toMatchObject({ status: 'succeeded', next_attempt_at: null, finished_at: expect.any(String) });
    expect(delivery?.attempts.map((a) => a.status_code)).toEqual([500, 503, 204]);
    const ids = new Set(at('/flaky').map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set([delivery?.id]));
    const stamps = at('/flaky').map((r) => Number(r.headers['webhook-timestamp']));
    expect(stamps[2]).toBeGreaterThan(stamps[0] ?? Infinity);
  });

  it('records a refused connection as a failed attempt with its reason, and a test delivery arrives', async () => {
    const user = await signup(t);
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const res = await json(t, 'POST', '/api/webhooks', { url: `http://127.0.0.1:${port}/gone`, event_types: ['token.created'] }, user.jwt);
    const dead = res.json() as { id: string };
    await json(t, 'POST', `/api/webhooks/${dead.id}/test`, undefined, user.jwt);
    const live = await addEndpoint(user, '/test', ['token.revoked']);
    await json(t, 'POST', `/api/webhooks/${live.id}/test`, undefined, user.jwt);

    await t.services.webhookDelivery.runOnce();
    const [failed] = await deliveries(user, dead.id);
    expect(failed).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: [{ status_code: null, error: 'connection refused' }] });
    const [arrived] = at('/test');
    expect(JSON.parse(arrived?.body ?? '{}')).toEqual({ type: 'webhook.test', timestamp: expect.any(String), data: { webhook_id: live.id } });
    if (arrived) expect(verified(live.secret, arrived)).toBeTruthy();
  });

  it('keeps finished deliveries 30 days, then the maintenance sweep removes them', async () => {
    const user = await signup(t);
    const hook = await addEndpoint(user, '/pruned', ['token.created']);
    await json(t, 'POST', `/api/webhooks/${hook.id}/test`, undefined, user.jwt);
    await t.services.webhookDelivery.runOnce();
    const stored = () => t.services.webhooks.deliveries(user.id, hook.id, {});
    expect((await stored()).deliveries.map((d) => d.status)).toEqual(['succeeded']);
    clock.advance(29 * 86_400_000);
    await t.services.maintenance.runOnce();
    expect((await stored()).deliveries).toHaveLength(1);
    clock.advance(2 * 86_400_000);
    await t.services.maintenance.runOnce();
    expect((await stored()).deliveries).toEqual([]);
  });

  it('on shutdown, aborts a send in flight and gives the delivery back unattempted, due at once (the last test: the worker stays stopped)', async () => {
    const user = await signup(t);
    const hook = await addEndpoint(user, '/hold', ['token.created']);
    await json(t, 'POST', `/api/webhooks/${hook.id}/test`, undefined, user.jwt);
    await t.services.webhookDelivery.worker.tick();
    const deadline = Date.now() + 30_000;
    while (at('/hold').length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(at('/hold')).toHaveLength(1);
    await t.services.webhookDelivery.stop();
    const [delivery] = (await t.services.webhooks.deliveries(user.id, hook.id, {})).deliveries;
    expect(delivery).toMatchObject({ status: 'pending', attempts: [] });
    // Released, not left leased: another instance may claim it at once.
    const claimed = await new WebhookQueue(t.services.database.db).claimDue(new Date(clock.now()).toISOString(), new Date(clock.now() + 1000).toISOString(), 'other', 10);
    expect(claimed.map((c) => c.id)).toContain(delivery?.id);
  });
});
