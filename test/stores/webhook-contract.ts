import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AuditEvent, auditEvent, type AuditType, OPERATOR_CONTEXT } from '../../src/audit/events.js';
import { planDeliveries } from '../../src/webhooks/dispatcher.js';
import type { AttemptOutcome } from '../../src/webhooks/queue.js';
import type { NewEndpoint } from '../../src/webhooks/store.js';
import { at, insertUser, type StoreHarness, useStores } from './fixture.js';

/**
 * The webhook outbox on every database (contract §9): endpoints with a per-user cap, events turned
 * into deliveries exactly once however many dispatchers run, due deliveries leased to one worker at
 * a time, attempts recorded only under the lease that made them, and pruning.
 */
export function webhookStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`webhook store contract: ${name}`, () => {
    const s = useStores(harness);

    const event = (type: AuditType, userId: string | null, n: number): AuditEvent =>
      auditEvent({ type, userId, subject: { type: 'webhook', id: randomUUID() } }, OPERATOR_CONTEXT, Date.parse(at(n)));
    const endpoint = (ownerUserId: string | null, eventTypes: AuditType[], n = 0): NewEndpoint => ({
      id: randomUUID(),
      ownerUserId,
      url: 'https://hooks.example.com/x',
      description: null,
      eventTypes,
      createdAt: at(n),
      secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
    });
    const add = async (e: NewEndpoint) => {
      expect(await s.webhooks.insertEndpoint(e, event('webhook.created', e.ownerUserId, 0), 10)).toBe(true);
      return e;
    };
    /** Marks whatever earlier tests left undispatched, so each test sees only its own events. */
    const drain = async () => {
      while ((await s.queue.dispatch(100, () => [])) > 0);
    };
    const dispatchAll = () => s.queue.dispatch(100, (events, endpoints) => planDeliveries(events, endpoints, Date.parse(at(30))));
    const outcome = (o: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
      attemptedAt: at(31),
      statusCode: 500,
      error: null,
      durationMs: 12,
      status: 'pending',
      nextAttemptAt: at(40),
      ...o,
    });

    it('keeps endpoints per owner, newest first, and at most the cap per user; the operator has none', async () => {
      const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
      const first = await add(endpoint(a.id, ['token.created'], 1));
      const second = await add(endpoint(a.id, ['token.revoked'], 2));
      await add(endpoint(b.id, ['token.created']));
      expect((await s.webhooks.listEndpoints(a.id)).map((e) => e.id)).toEqual([second.id, first.id]);
      expect(await s.webhooks.findEndpoint(first.id, b.id)).toBeUndefined();
      expect(await s.webhooks.findEndpoint(first.id, undefined)).toMatchObject({ id: first.id, eventTypes: ['token.created'], ownerUserId: a.id });
      expect(JSON.stringify(await s.webhooks.listEndpoints(a.id))).not.toContain('whsec_');

      const capped = endpoint(a.id, ['token.created']);
      expect(await s.webhooks.insertEndpoint(capped, event('webhook.created', a.id, 3), 2)).toBe(false);
      expect(await s.webhooks.findEndpoint(capped.id, undefined)).toBeUndefined();
      // Creations racing for the last place: exactly one wins.
      const racers = [endpoint(b.id, ['token.created']), endpoint(b.id, ['token.created']), endpoint(b.id, ['token.created'])];
      const won = await Promise.all(racers.map((e) => s.webhooks.insertEndpoint(e, event('webhook.created', b.id, 4), 2)));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await s.webhooks.insertEndpoint(endpoint(null, ['token.created']), event('webhook.created', null, 4), 0)).toBe(true);
    });

    it('deletes an endpoint of its owner only, with its deliveries and its audit event', async () => {
      const user = await insertUser(s.users);
      const e = await add(endpoint(user.id, ['token.created']));
      expect(await s.webhooks.insertCapped({ id: randomUUID(), endpointId: e.id, eventId: null, eventType: 'webhook.test', payload: '{}', createdAt: at(5) }, Number.POSITIVE_INFINITY)).toBe('queued');
      const deleted = event('webhook.deleted', user.id, 6);
      expect(await s.webhooks.deleteEndpoint(e.id, randomUUID(), () => deleted)).toBeUndefined();
      expect(await s.webhooks.deleteEndpoint(e.id, user.id, () => deleted)).toMatchObject({ id: e.id });
      expect(await s.webhooks.listDeliveries(e.id, 10)).toEqual([]);
      expect((await s.audit.list({ userId: user.id, limit: 1 }))[0]?.id).toBe(deleted.id);
    });

    it("dispatches each event once, to its owner's and the operator's endpoints of its type that existed when it occurred", async () => {
      await drain();
      const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
      const mine = await add(endpoint(a.id, ['token.created', 'token.revoked'], 1));
      const theirs = await add(endpoint(b.id, ['token.created'], 1));
      const operator = await add(endpoint(null, ['token.revoked'], 1));
      const later = await add(endpoint(a.id, ['token.created'], 20));
      await drain();
      const created = event('token.created', a.id, 10);
      const revoked = event('token.revoked', a.id, 11);
      const nobodys = event('token.revoked', null, 12);
      await s.audit.record([created, revoked, nobodys, event('login.failed', a.id, 13)]);
      expect(await s.queue.hasUndispatched()).toBe(true);

      // Two dispatchers at once claim each event exactly once between them.
      const claimed = await Promise.all([dispatchAll(), dispatchAll()]);
      expect(claimed[0] + claimed[1]).toBe(4);
      expect(await s.queue.hasUndispatched()).toBe(false);
      expect(await dispatchAll()).toBe(0);

      const eventsAt = async (id: string) => (await s.webhooks.listDeliveries(id, 10)).map((d) => d.eventId).sort();
      expect(await eventsAt(mine.id)).toEqual([created.id, revoked.id].sort());
      expect(await eventsAt(theirs.id)).toEqual([]);
      expect(await eventsAt(operator.id)).toEqual([revoked.id, nobodys.id].sort());
      expect(await eventsAt(later.id)).toEqual([]);
      const [delivery] = await s.webhooks.listDeliveries(operator.id, 1);
      expect(delivery).toMatchObject({ status: 'pending', createdAt: at(30), nextAttemptAt: at(30), finishedAt: null, attempts: [] });
    });

    it('queues an event for the dispatcher only while an endpoint of its user or of the operator exists', async () => {
      for (const e of await s.webhooks.listEndpoints(undefined)) await s.webhooks.deleteEndpoint(e.id, undefined, () => event('webhook.deleted', e.ownerUserId, 1));
      await drain();
      const [a, b] = [await insertUser(s.users), await insertUser(s.users)];
      // No endpoint anywhere: nothing waits for the dispatcher.
      await s.audit.record([event('token.created', a.id, 2), event('login.failed', null, 2)]);
      expect(await s.queue.hasUndispatched()).toBe(false);

      await add(endpoint(a.id, ['token.created'], 3));
      await drain();
      await s.audit.record([event('token.created', a.id, 4), event('token.created', b.id, 4), event('token.revoked', null, 4)]);
      expect(await dispatchAll()).toBe(1);

      await add(endpoint(null, ['token.created'], 5));
      await drain();
      await s.audit.record([event('token.created', b.id, 6), event('token.revoked', null, 6)]);
      expect(await dispatchAll()).toBe(2);
    });

    it('leases a due delivery to one claim at a time and records an attempt only under its lease', async () => {
      const user = await insertUser(s.users);
      const e = await add(endpoint(user.id, ['token.created']));
      const id = randomUUID();
      expect(await s.webhooks.insertCapped({ id, endpointId: e.id, eventId: null, eventType: 'webhook.test', payload: '{"a":1}', createdAt: at(30) }, Number.POSITIVE_INFINITY)).toBe('queued');
      expect((await s.queue.claimDue(at(29), at(29), 'early', 10)).map((c) => c.id)).not.toContain(id);

      const [first, second] = await Promise.all([s.queue.claimDue(at(30), at(50), 'one', 10), s.queue.claimDue(at(30), at(50), 'two', 10)]);
      const claims = [...(first ?? []), ...(second ?? [])].filter((c) => c.id === id);
      expect(claims).toHaveLength(1);
      const stale = claims[0];
      expect(stale).toMatchObject({ url: e.url, secret: e.secret, payload: '{"a":1}', attemptCount: 0 });
      expect((await s.queue.claimDue(at(49), at(70), 'three', 10)).map((c) => c.id)).not.toContain(id);

      // The first lease lapsed (its worker died): another claim takes the delivery, and the stale worker records nothing.
      const [retaken] = (await s.queue.claimDue(at(50), at(70), 'four', 10)).filter((c) => c.id === id);
      expect(retaken?.leaseToken).toBe('four');
      expect(await s.queue.recordAttempt(id, stale?.leaseToken ?? '', outcome())).toBe(false);
      expect(await s.queue.recordAttempt(id, 'four', outcome({ error: 'connection refused', statusCode: null }))).toBe(true);
      expect(await s.queue.recordAttempt(id, 'four', outcome())).toBe(false);

      const [after] = await s.webhooks.listDeliveries(e.id, 1);
      expect(after).toMatchObject({ status: 'pending', nextAttemptAt: at(40), attempts: [{ attemptedAt: at(31), statusCode: null, error: 'connection refused', durationMs: 12 }] });
      const [again] = (await s.queue.claimDue(at(40), at(60), 'five', 10)).filter((c) => c.id === id);
      expect(again?.attemptCount).toBe(1);
      expect(await s.queue.recordAttempt(id, 'five', outcome({ statusCode: 204, status: 'succeeded', nextAttemptAt: null, attemptedAt: at(41) }))).toBe(true);
      const [done] = await s.webhooks.listDeliveries(e.id, 1);
      expect(done).toMatchObject({ status: 'succeeded', nextAttemptAt: null, finishedAt: at(41) });
      expect(done?.attempts.map((a) => a.statusCode)).toEqual([null, 204]);
      expect((await s.queue.claimDue(at(59), at(90), 'six', 10)).map((c) => c.id)).not.toContain(id);

      // A released lease is due again at once.
      const other = randomUUID();
      expect(await s.webhooks.insertCapped({ id: other, endpointId: e.id, eventId: null, eventType: 'webhook.test', payload: '{}', createdAt: at(30) }, Number.POSITIVE_INFINITY)).toBe('queued');
      await s.queue.claimDue(at(30), at(50), 'seven', 10);
      await s.queue.release(other, 'seven');
      expect((await s.queue.claimDue(at(31), at(50), 'eight', 10)).map((c) => c.id)).toContain(other);
    });

    it('a claim takes at most its limit, of events and of due deliveries (a rescanned SKIP LOCKED subquery took them all)', async () => {
      const user = await insertUser(s.users);
      await drain();
      const e = await add(endpoint(user.id, ['token.created']));
      await drain();
      await s.audit.record(Array.from({ length: 30 }, (_, i) => event('token.created', user.id, 30 + (i % 5))));
      expect(await s.queue.dispatch(8, () => [])).toBe(8);
      await drain();
      // Drain the earlier tests' due deliveries, then add 30 of ours over six endpoints.
      while ((await s.queue.claimDue(at(99), at(100), randomUUID(), 100)).length > 0);
      const endpoints = [e, ...(await Promise.all(Array.from({ length: 5 }, () => add(endpoint(user.id, ['token.created'])))))];
      for (let i = 0; i < 30; i++) {
        expect(await s.webhooks.insertCapped({ id: randomUUID(), endpointId: endpoints[i % 6]?.id ?? '', eventId: null, eventType: 'webhook.test', payload: '{}', createdAt: at(30) }, Number.POSITIVE_INFINITY)).toBe('queued');
      }
      const claimed = await s.queue.claimDue(at(30), at(50), 'limited', 8);
      expect(claimed).toHaveLength(8);
      expect(new Set(claimed.map((c) => c.leaseToken))).toEqual(new Set(['limited']));
      // Two per endpoint: the four endpoints that hold two leases are passed over, the other two give two each.
      expect(await s.queue.claimDue(at(30), at(50), 'rest', 100)).toHaveLength(4);
    });

    it('an endpoint has at most two deliveries in flight, whichever claim leased them: a backlog on a slow endpoint delayed every other endpoint', async () => {
      const user = await insertUser(s.users);
      while ((await s.queue.claimDue(at(99), at(100), randomUUID(), 100)).length > 0);
      const slow = await add({ ...endpoint(user.id, ['token.created']), url: 'https://slow.example.com/x' });
      const other = await add(endpoint(user.id, ['token.created']));
      const insert = async (endpointId: string, createdAt: string) => {
        const id = randomUUID();
        expect(await s.webhooks.insertCapped({ id, endpointId, eventId: null, eventType: 'webhook.test', payload: '{}', createdAt }, Number.POSITIVE_INFINITY)).toBe('queued');
        return id;
      };
      // The slow endpoint's backlog is older than the other endpoint's one delivery.
      for (let i = 0; i < 40; i++) await insert(slow.id, at(10));
      const waiting = await insert(other.id, at(20));
      const first = await s.queue.claimDue(at(30), at(60), 'first', 8);
      expect(first.filter((c) => c.url === slow.url)).toHaveLength(2);
      expect(first.map((c) => c.id)).toContain(waiting);
      // Its two leases still hold: a later claim, here or on another instance, takes none of its backlog.
      expect(await s.queue.claimDue(at(31), at(60), 'second', 8)).toEqual([]);
      // One attempt ends: one more of its backlog may go.
      const done = first.find((c) => c.url === slow.url);
      expect(await s.queue.recordAttempt(done?.id ?? '', 'first', outcome({ statusCode: 204, status: 'succeeded', nextAttemptAt: null, attemptedAt: at(32) }))).toBe(true);
      expect(await s.queue.claimDue(at(33), at(60), 'third', 8)).toHaveLength(1);
      // Once the leases lapse (the workers died), the backlog is claimable again, two at a time.
      const fourth = await s.queue.claimDue(at(61), at(90), 'fourth', 8);
      expect(fourth.filter((c) => c.url === slow.url)).toHaveLength(2);
    });

    it('pages deliveries newest first and prunes finished ones older than a time', async () => {
      const user = await insertUser(s.users);
      const e = await add(endpoint(user.id, ['token.created']));
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      for (const [i, id] of ids.entries()) expect(await s.webhooks.insertCapped({ id, endpointId: e.id, eventId: null, eventType: 'webhook.test', payload: '{}', createdAt: at(i) }, Number.POSITIVE_INFINITY)).toBe('queued');
      const page = await s.webhooks.listDeliveries(e.id, 2);
      expect(page.map((d) => d.id)).toEqual([ids[2], ids[1]]);
      const last = page[1];
      expect((await s.webhooks.listDeliveries(e.id, 2, last)).map((d) => d.id)).toEqual([ids[0]]);

      for (const [i, id] of ids.entries()) {
        await s.queue.claimDue(at(i), at(59), `t${i}`, 1);
        if (i < 2) await s.queue.recordAttempt(id, `t${i}`, outcome({ status: 'failed', nextAttemptAt: null, attemptedAt: at(10 + i) }));
      }
      expect(await s.webhooks.pruneFinished(at(11))).toBe(1);
      expect((await s.webhooks.listDeliveries(e.id, 10)).map((d) => d.id)).toEqual([ids[2], ids[1]]);
    });
  });
}
