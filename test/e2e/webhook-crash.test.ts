import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { request } from '../helpers/server-process.js';
import { type DeliveryBody, type DeliveryJson, type EndpointJson, verified, webhookDatabases, webhookProcesses } from '../helpers/webhooks.js';

/**
 * Contract §9: deliveries survive a crash. The service is SIGKILLed while deliveries are in flight
 * (the receiver holds them open), restarted on the same database, and every event still reaches
 * the receiver, signed, under one stable webhook-id (receivers dedupe on it).
 */

const EVENTS = 20;
/** WEBHOOK_TIMEOUT_SECONDS: a held request fails after 1 s; a lease lasts 2 x 1 s + 1 s. */
const TIMEOUT_SECONDS = 1;
const LEASE_MS = (2 * TIMEOUT_SECONDS + 1) * 1000;
/**
 * After the restart, every delivery is due within a lease (sent when killed), or within the first
 * retry (5 s + 20 % jitter) when its attempt had already timed out, or at once (never attempted);
 * the dispatcher and worker run about every second. The bound adds room for a slow machine: the
 * test asserts that delivery resumes, not how fast.
 */
const RESUME_BOUND_MS = LEASE_MS + 6_000 + 2_000 + 20_000;

const databases = await webhookDatabases();

describe.each(databases)('webhook deliveries across a SIGKILL on %s', (database) => {
  const { receiver: receiverOf, start } = webhookProcesses(database, 'hold', { WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) });

  it('resends every delivery in flight or pending after a restart, each under its one webhook-id', async () => {
    const receiver = receiverOf();
    const first = await start();
    const signup = await request(first.url, 'POST', '/api/auth/signup', {
      body: { email: `crash-${database}@example.com`, username: `crash_hooks_${database}`, password: PASSWORD },
    });
    expect(signup.status).toBe(201);
    const jwt = (signup.body as { token: string }).token;
    const hook = await request(first.url, 'POST', '/api/webhooks', { token: jwt, body: { url: `${receiver.url}/hook`, event_types: ['token.created'] } });
    expect(hook.status).toBe(201);
    const { id: hookId, secret } = hook.body as EndpointJson;

    // All at once, so the kill below comes before a held attempt can fail twice (the second retry
    // is a minute away): at most one failed attempt per delivery keeps every one due within the bound.
    const created = await Promise.all(
      Array.from({ length: EVENTS }, (_, i) => request(first.url, 'POST', '/api/tokens', { token: jwt, body: { name: `crash ${i}` } })),
    );
    for (const res of created) expect(res.status).toBe(201);
    const tokens = created.map((res) => (res.body as { id: string }).id);

    // Kill as soon as deliveries are in flight: the receiver holds them, unanswered.
    await receiver.waitFor('a delivery in flight', () => receiver.held.length > 0);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    const heldBeforeKill = receiver.held.length;
    const heldForMs = Date.now() - (receiver.held[0]?.at ?? 0);
    expect(heldBeforeKill).toBeGreaterThan(0);
    receiver.setMode('answer');

    const second = await start();
    const restarted = Date.now();
    const tokenOf = (body: DeliveryBody) => (body.data.subject as { id?: string } | null)?.id;
    const arrivedFor = () => new Set(receiver.answered.map((r) => tokenOf(verified(secret, r))));
    await receiver.waitFor(`all ${EVENTS} events delivered after the restart`, () => tokens.every((t) => arrivedFor().has(t)), RESUME_BOUND_MS);
    console.info(`webhook crash (${database}): ${heldBeforeKill} held at the kill (the first for ${heldForMs} ms), all ${EVENTS} delivered ${Date.now() - restarted} ms after the restart`);

    // One webhook-id per event, the same in every request for it (held before the kill included).
    const idsByToken = new Map<string, Set<string>>();
    for (const r of [...receiver.held, ...receiver.answered]) {
      const body = verified(secret, r);
      expect(body.type).toBe('token.created');
      const token = tokenOf(body);
      expect(tokens).toContain(token);
      const ids = idsByToken.get(token ?? '') ?? new Set<string>();
      ids.add(r.headers['webhook-id'] ?? '');
      idsByToken.set(token ?? '', ids);
    }
    expect(idsByToken.size).toBe(EVENTS);
    for (const [token, ids] of idsByToken) expect(ids.size, `token ${token}: one webhook-id across attempts`).toBe(1);
    expect(new Set([...idsByToken.values()].flatMap((ids) => [...ids])).size, 'a distinct webhook-id per event').toBe(EVENTS);

    // The API agrees: one delivery per event, each the one received, each recorded as succeeded
    // (the answer is recorded just after the receiver sends it: polled, not assumed).
    let deliveries: DeliveryJson[] = [];
    const listed = async () => {
      const res = await request(second.url, 'GET', `/api/webhooks/${hookId}/deliveries?limit=100`, { token: jwt });
      expect(res.status).toBe(200);
      deliveries = (res.body as { deliveries: typeof deliveries }).deliveries;
      return deliveries.every((d) => d.status === 'succeeded');
    };
    const deadline = Date.now() + 10_000;
    while (!(await listed()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(deliveries.map((d) => d.status)).toEqual(Array<string>(EVENTS).fill('succeeded'));
    const received = new Set([...idsByToken.values()].flatMap((ids) => [...ids]));
    expect(new Set(deliveries.map((d) => d.id))).toEqual(received);
  }, 120_000);
});
