import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_CONTEXT } from '../../src/audit/events.js';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';

interface EndpointJson {
  id: string;
  paused?: { consecutive_failures: number; next_probe_at: string };
}

/**
 * Sharing the senders (docs/webhooks.md): hanging receivers of two users do not hold every slot,
 * and an endpoint that keeps failing is paused, probed and resumed. Real loopback receivers
 * (WEBHOOK_ALLOW_PRIVATE=true); the worker is driven on a clock the test moves.
 */
describe('webhook delivery shared fairly between owners', () => {
  let t: TestApp;
  let receiver: Server;
  let base: string;
  const clock = new TestClock(Date.now());
  const arrived = new Map<string, number>();
  /** The status /flaky answers. */
  let flaky = 500;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const path = req.url ?? '';
      req.resume();
      arrived.set(path, (arrived.get(path) ?? 0) + 1);
      // A path under /hang is never answered: its attempt holds a slot until the timeout.
      if (!path.startsWith('/hang')) res.writeHead(path === '/flaky' ? flaky : 204).end();
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_SECONDS: '60', RATE_LIMITS: 'off' }, clock });
  });
  afterAll(async () => {
    await t.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  const addEndpoint = async (user: TestUser, path: string, eventTypes = ['token.created']) => {
    const res = await json(t, 'POST', '/api/webhooks', { url: `${base}${path}`, event_types: eventTypes }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string };
  };
  const hanging = () => [...arrived].filter(([path]) => path.startsWith('/hang')).reduce((n, [, count]) => n + count, 0);
  /** Waits, in real time, for a receiver path to be reached: the sends run on real sockets. */
  const reached = async (path: string) => {
    const deadline = Date.now() + 10_000;
    while (!arrived.has(path) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return arrived.has(path);
  };

  it('pauses an endpoint after 5 failed attempts in a row, shows it, probes it once the pause ends and resumes it on success', async () => {
    const user = await signup(t);
    const hook = await addEndpoint(user, '/flaky');
    for (let i = 0; i < 6; i++) await createApiToken(t, user.jwt);
    await t.services.webhookDelivery.runOnce();
    const shown = async () => ((await json(t, 'GET', '/api/webhooks', undefined, user.jwt)).json() as { webhooks: EndpointJson[] }).webhooks.find((w) => w.id === hook.id);
    const paused = (await shown())?.paused;
    expect(paused?.consecutive_failures).toBe(6);
    const wait = Date.parse(paused?.next_probe_at ?? '') - clock.now();
    expect(wait).toBeGreaterThan(55_000);
    // A minute from the end of the fifth attempt, which took real milliseconds.
    expect(wait).toBeLessThanOrEqual(61_000);
    expect(arrived.get('/flaky')).toBe(6);
    // The retries fall due within the pause: nothing is sent until it ends.
    clock.advance(wait - 1000);
    await t.services.webhookDelivery.runOnce();
    expect(arrived.get('/flaky')).toBe(6);

    flaky = 204;
    clock.advance(1000);
    await t.services.webhookDelivery.runOnce();
    expect(arrived.get('/flaky')).toBe(12);
    expect((await shown())?.paused).toBeUndefined();
    const deliveries = (await json(t, 'GET', `/api/webhooks/${hook.id}/deliveries`, undefined, user.jwt)).json() as { deliveries: Array<{ status: string }> };
    expect(deliveries.deliveries.map((d) => d.status)).toEqual(Array(6).fill('succeeded'));
    const audit = (await json(t, 'GET', '/api/audit?limit=2', undefined, user.jwt)).json() as { events: Array<{ type: string; actor: { type: string }; subject: { id: string } }> };
    expect(audit.events.map((e) => [e.type, e.actor.type, e.subject.id])).toEqual([
      ['webhook.resumed', 'system', hook.id],
      ['webhook.paused', 'system', hook.id],
    ]);
  });

  it("two users' hanging endpoints held all 32 slots and delayed a third user's and the operator's deliveries: now those go out in the same round", async () => {
    for (const name of ['a', 'b']) {
      const user = await signup(t);
      const hooks = [];
      for (let i = 0; i < 10; i++) hooks.push(await addEndpoint(user, `/hang/${name}${i}`));
      for (let i = 0; i < 6; i++) await createApiToken(t, user.jwt);
      for (const hook of hooks) for (let i = 0; i < 3; i++) expect((await json(t, 'POST', `/api/webhooks/${hook.id}/test`, undefined, user.jwt)).statusCode).toBe(202);
    }
    // 180 deliveries to hanging receivers, all older than the two below.
    clock.advance(1000);
    const third = await signup(t);
    await addEndpoint(third, '/third');
    await createApiToken(t, third.jwt);
    clock.advance(1000);
    await t.services.webhooks.create(null, { url: `${base}/operator`, eventTypes: ['token.created'] }, OPERATOR_CONTEXT);
    await createApiToken(t, third.jwt);

    await t.services.webhookDelivery.dispatcher.runOnce();
    const started = Date.now();
    const claimed = await t.services.webhookDelivery.worker.tick();
    expect(await reached('/third')).toBe(true);
    expect(await reached('/operator')).toBe(true);
    const elapsed = Date.now() - started;
    // Each hanging user holds 8 slots (their cap), the third user and the operator theirs.
    expect(claimed).toBe(8 + 8 + 2 + 1);
    expect(elapsed).toBeLessThan(5_000);
    const deadline = Date.now() + 10_000;
    while (hanging() < 16 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hanging()).toBe(16);
    // Abort the hanging sends: their deliveries are given back, and this test's worker is done.
    await t.services.webhookDelivery.stop();
  });
});
