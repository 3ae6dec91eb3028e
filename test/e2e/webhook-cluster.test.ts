import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { request } from '../helpers/server-process.js';
import { type DeliveryJson, webhookDatabases, webhookProcesses } from '../helpers/webhooks.js';

type Delivery = DeliveryJson & { readonly attempts: readonly unknown[] };

/**
 * Contract §9: "each delivery sent by one instance at a time". Two server processes on one database
 * (`--workers 2` on one SQLite file, or two PostgreSQL instances' worth of connections) dispatch
 * and send at once: every event becomes one delivery, and each is sent exactly once.
 */
describe.each(await webhookDatabases())('webhooks with several server processes (%s)', { timeout: 120_000 }, (database) => {
  const block = webhookProcesses(database, 'answer', { WORKERS: '2' });

  it('sends each of many deliveries exactly once between the processes', async () => {
    const { url } = await block.start();
    const signup = await request(url, 'POST', '/api/auth/signup', { body: { email: 'many@example.com', username: 'many_events', password: PASSWORD } });
    const { token: jwt } = signup.body as { token: string };
    const hook = await request(url, 'POST', '/api/webhooks', { token: jwt, body: { url: `${block.receiver().url}/many`, event_types: ['token.created'] } });
    expect(hook.status).toBe(201);
    const { id } = hook.body as { id: string };
    const n = 40;
    // Created in parallel, so both processes record events and both dispatchers find some waiting.
    const created = await Promise.all(Array.from({ length: n }, (_, i) => request(url, 'POST', '/api/tokens', { token: jwt, body: { name: `t${i}` } })));
    expect(created.map((r) => r.status)).toEqual(Array<number>(n).fill(201));

    const received = () => block.receiver().answered.filter((r) => r.path === '/many');
    let deliveries: Delivery[] = [];
    const deadline = Date.now() + 60_000;
    while (!(deliveries.length === n && deliveries.every((d) => d.status === 'succeeded')) && Date.now() < deadline) {
      const res = await request(url, 'GET', `/api/webhooks/${id}/deliveries?limit=200`, { token: jwt });
      deliveries = (res.body as { deliveries: Delivery[] }).deliveries;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries).toHaveLength(n);
    expect(deliveries.every((d) => d.status === 'succeeded' && d.attempts.length === 1)).toBe(true);
    const ids = received().map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(n);
    expect(ids).toHaveLength(n);
    expect(new Set(deliveries.map((d) => d.event_id)).size).toBe(n);
  });
});
