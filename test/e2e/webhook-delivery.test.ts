import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { PASSWORD } from '../helpers/api.js';
import { request } from '../helpers/server-process.js';
import { cliJsonLines, type DeliveryBody, type DeliveryJson, type EndpointJson, type Received, verified, webhookDatabases, webhookProcesses } from '../helpers/webhooks.js';

/**
 * Contract §9, webhooks, with real processes: `rz-auth serve` sends Standard Webhooks to a real
 * receiver, which verifies every signature with the standardwebhooks package. A user's endpoint
 * gets the user's own events of its types; an operator's (CLI) gets everyone's of its types.
 */

interface AuditJson {
  id: string;
  type: string;
  occurred_at: string;
  subject: { type: string; id: string } | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function signup(base: string, name: string): Promise<{ jwt: string; id: string }> {
  const res = await request(base, 'POST', '/api/auth/signup', { body: { email: `${name}@example.com`, username: name, password: PASSWORD } });
  expect(res.status).toBe(201);
  const { token, user } = res.body as { token: string; user: { id: string } };
  return { jwt: token, id: user.id };
}

async function createToken(base: string, jwt: string, name: string): Promise<string> {
  const res = await request(base, 'POST', '/api/tokens', { token: jwt, body: { name } });
  expect(res.status).toBe(201);
  return (res.body as { id: string }).id;
}

/** The user's own audit events (GET /api/audit), which is what a delivery's `data` must equal. */
async function auditOf(base: string, jwt: string): Promise<AuditJson[]> {
  const res = await request(base, 'GET', '/api/audit?limit=100', { token: jwt });
  expect(res.status).toBe(200);
  return (res.body as { events: AuditJson[] }).events;
}

/** Checks the headers every delivery carries and returns its verified body. */
function checkDelivery(secret: string, received: Received): DeliveryBody {
  const body = verified(secret, received);
  expect(received.headers['content-type']).toBe('application/json');
  expect(received.headers['user-agent']).toBe(`rz-auth-webhooks/${VERSION}`);
  expect(received.headers['webhook-id']).toMatch(UUID);
  expect(Math.abs(Number(received.headers['webhook-timestamp']) - received.at / 1000)).toBeLessThan(60);
  expect(Object.keys(body).sort()).toEqual(['data', 'timestamp', 'type']);
  return body;
}

const databases = await webhookDatabases();

describe.each(databases)('webhook deliveries on %s', (database) => {
  const { env, receiver: receiverOf, start } = webhookProcesses(database, 'answer');

  it("a user's endpoint gets their own events of its types, an operator's everyone's; every signature verifies", async () => {
    const receiver = receiverOf();
    const server = await start();
    const base = server.url;

    const [operator] = await cliJsonLines(['webhooks', 'add', '--url', `${receiver.url}/operator`, '--events', 'token.created,webhook.created'], env);
    expect(operator).toMatchObject({ id: expect.stringMatching(UUID), url: `${receiver.url}/operator`, event_types: ['token.created', 'webhook.created'] });
    const op = operator as unknown as EndpointJson;
    expect(op.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);

    const alice = await signup(base, 'alice_hooks');
    const bob = await signup(base, 'bob_hooks');
    const aliceEarly = await createToken(base, alice.jwt, 'before the endpoint');

    const created = await request(base, 'POST', '/api/webhooks', {
      token: alice.jwt,
      body: { url: `${receiver.url}/alice`, event_types: ['token.created', 'token.revoked'], description: 'alice hooks' },
    });
    expect(created.status).toBe(201);
    const mine = created.body as EndpointJson;
    expect(Object.keys(mine).sort()).toEqual(['created_at', 'description', 'event_types', 'id', 'secret', 'url']);
    expect(mine).toMatchObject({ url: `${receiver.url}/alice`, description: 'alice hooks', event_types: ['token.created', 'token.revoked'] });
    expect(mine.created_at).toMatch(ISO);
    expect(mine.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(mine.secret).not.toBe(op.secret);

    const a1 = await createToken(base, alice.jwt, 'a1');
    expect((await request(base, 'DELETE', `/api/tokens/${a1}`, { token: alice.jwt })).status).toBe(204);
    const b1 = await createToken(base, bob.jwt, 'b1');
    expect((await request(base, 'DELETE', `/api/tokens/${b1}`, { token: bob.jwt })).status).toBe(204);
    const test = await request(base, 'POST', `/api/webhooks/${mine.id}/test`, { token: alice.jwt });
    expect(test.status).toBe(202);
    const testDelivery = (test.body as { delivery: DeliveryJson }).delivery;
    expect(testDelivery).toMatchObject({ id: expect.stringMatching(UUID), event_id: null, event_type: 'webhook.test' });
    // The last event: deliveries are made from events in order, so once this one has arrived at both
    // endpoints, every delivery for an earlier event exists and is listed.
    const sentinel = await createToken(base, alice.jwt, 'sentinel');

    const subjectOf = (r: Received) => (JSON.parse(r.body) as DeliveryBody).data.subject as { id?: string } | null;
    const at = (path: string) => receiver.answered.filter((r) => r.path === path);
    await receiver.waitFor('the last event at both endpoints', () => ['/alice', '/operator'].every((p) => at(p).some((r) => subjectOf(r)?.id === sentinel)));

    const aliceListed = await request(base, 'GET', `/api/webhooks/${mine.id}/deliveries?limit=100`, { token: alice.jwt });
    expect(aliceListed.status).toBe(200);
    const aliceDeliveries = (aliceListed.body as { deliveries: DeliveryJson[] }).deliveries;
    const opDeliveries = (await cliJsonLines(['webhooks', 'deliveries', op.id, '--limit', '100'], env)) as unknown as DeliveryJson[];
    const arrived = (path: string, list: DeliveryJson[]) => list.every((d) => at(path).some((r) => r.headers['webhook-id'] === d.id));
    await receiver.waitFor('every listed delivery', () => arrived('/alice', aliceDeliveries) && arrived('/operator', opDeliveries));

    const aliceEvents = await auditOf(base, alice.jwt);
    const bobEvents = await auditOf(base, bob.jwt);
    const operatorOnly = await cliJsonLines(['audit', 'list', '--type', 'webhook.created'], env);
    const after = (since: string) => (e: { occurred_at: unknown }) => String(e.occurred_at) >= since;

    // Alice: her events of her two types since her endpoint exists, and the test delivery. Not Bob's.
    const aliceExpected = aliceEvents.filter((e) => ['token.created', 'token.revoked'].includes(e.type)).filter(after(mine.created_at));
    expect(aliceExpected.map((e) => [e.type, e.subject?.id]).sort()).toEqual(
      [['token.created', a1], ['token.revoked', a1], ['token.created', sentinel]].sort(),
    );
    const aliceGot = at('/alice').map((r) => ({ id: r.headers['webhook-id'], body: checkDelivery(mine.secret, r) }));
    expect(new Set(aliceGot.map((g) => g.id)).size, 'one request per delivery: nothing failed, nothing was sent twice').toBe(aliceGot.length);
    expect(aliceGot.map((g) => g.id).sort()).toEqual(aliceDeliveries.map((d) => d.id).sort());
    for (const event of aliceExpected) {
      const got = aliceGot.filter((g) => g.body.data.id === event.id);
      expect(got, `alice: ${event.type} ${event.id}`).toHaveLength(1);
      expect(got[0]?.body).toEqual({ type: event.type, timestamp: event.occurred_at, data: event });
    }
    const aliceTest = aliceGot.filter((g) => g.body.type === 'webhook.test');
    expect(aliceTest).toHaveLength(1);
    expect(aliceTest[0]?.id).toBe(testDelivery.id);
    expect(aliceTest[0]?.body.data).toEqual({ webhook_id: mine.id });
    expect(aliceTest[0]?.body.timestamp).toMatch(ISO);
    expect(aliceGot).toHaveLength(aliceExpected.length + 1);
    const subjects = aliceGot.map((g) => (g.body.data.subject as { id?: string } | null)?.id);
    expect(subjects).not.toContain(aliceEarly);
    expect(subjects).not.toContain(b1);

    // The operator: everyone's events of its two types since it exists, its own creation included.
    const everyone = [...aliceEvents, ...bobEvents, ...operatorOnly.filter((e) => e.user_id === null)] as AuditJson[];
    const opExpected = everyone.filter((e) => ['token.created', 'webhook.created'].includes(e.type)).filter(after(op.created_at));
    const opGot = at('/operator').map((r) => ({ id: r.headers['webhook-id'], body: checkDelivery(op.secret, r) }));
    expect(new Set(opGot.map((g) => g.id)).size).toBe(opGot.length);
    expect(opGot.map((g) => g.id).sort()).toEqual(opDeliveries.map((d) => d.id).sort());
    expect(opGot.map((g) => g.body.data.id).sort()).toEqual(opExpected.map((e) => e.id).sort());
    for (const id of [aliceEarly, a1, b1, sentinel]) {
      expect(opGot.filter((g) => g.body.type === 'token.created' && (g.body.data.subject as { id?: string } | null)?.id === id), id).toHaveLength(1);
    }
    const aliceCreatedHook = aliceEvents.filter((e) => e.type === 'webhook.created');
    expect(aliceCreatedHook).toHaveLength(1);
    expect(opGot.filter((g) => g.body.data.id === aliceCreatedHook[0]?.id)).toHaveLength(1);
    for (const event of [...aliceEvents, ...bobEvents]) {
      const got = opGot.find((g) => g.body.data.id === event.id);
      if (got) expect(got.body).toEqual({ type: event.type, timestamp: event.occurred_at, data: event });
    }
    expect(opGot.some((g) => g.body.type === 'token.revoked')).toBe(false);
  }, 120_000);
});
