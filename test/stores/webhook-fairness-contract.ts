import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AuditEvent, auditEvent, type AuditType, OPERATOR_CONTEXT, SYSTEM_CONTEXT } from '../../src/audit/events.js';
import { BREAKER_THRESHOLD, type BreakerChange } from '../../src/webhooks/breaker.js';
import type { AttemptOutcome } from '../../src/webhooks/queue.js';
import type { NewEndpoint } from '../../src/webhooks/store.js';
import { at, insertUser, type StoreHarness, useStores } from './fixture.js';

/**
 * How due deliveries share the senders on every database (docs/webhooks.md): a cap per owner
 * counted across claims, round-robin over owners, slots only operator endpoints may take, and the
 * per-endpoint circuit breaker every instance reads from the endpoint's row.
 */
export function webhookFairnessContract(name: string, harness: () => StoreHarness): void {
  describe(`webhook fairness and breaker contract: ${name}`, () => {
    const s = useStores(harness);
    const share = { forUsers: 28, perOwner: 8 };

    const event = (type: AuditType, userId: string | null): AuditEvent => auditEvent({ type, userId, subject: { type: 'webhook', id: randomUUID() } }, OPERATOR_CONTEXT, Date.parse(at(0)));
    const add = async (ownerUserId: string | null): Promise<NewEndpoint> => {
      const e: NewEndpoint = { id: randomUUID(), ownerUserId, url: `https://${randomUUID()}.example.com/x`, description: null, eventTypes: ['token.created'], createdAt: at(0), secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0' };
      expect(await s.webhooks.insertEndpoint(e, event('webhook.created', ownerUserId), 100)).toBe(true);
      return e;
    };
    const queue = async (endpointId: string, createdAt: string) => {
      const id = randomUUID();
      expect(await s.webhooks.insertCapped({ id, endpointId, eventId: null, eventType: 'webhook.test', payload: '{}', createdAt }, Number.POSITIVE_INFINITY)).toBe('queued');
      return id;
    };
    /** Leases everything earlier tests left due, for good. */
    const drain = async (now: string) => {
      while ((await s.queue.claimDue(now, at(100_000), randomUUID(), 100)).length > 0);
    };
    const outcome = (ok: boolean, n: number): AttemptOutcome => ({
      attemptedAt: at(n),
      statusCode: ok ? 204 : 500,
      error: null,
      durationMs: 0,
      status: ok ? 'succeeded' : 'pending',
      nextAttemptAt: ok ? null : at(n),
    });

    it("two owners' hanging backlogs held every slot and delayed a third owner and the operator: now each owner holds at most its cap", async () => {
      await drain(at(30));
      const [a, b, c] = [await insertUser(s.users), await insertUser(s.users), await insertUser(s.users)];
      const owned = new Map<string, string | null>();
      for (const owner of [a, b]) {
        for (let i = 0; i < 10; i++) {
          const e = await add(owner.id);
          for (let j = 0; j < 15; j++) owned.set(await queue(e.id, at(10)), owner.id);
        }
      }
      const third = await queue((await add(c.id)).id, at(20));
      const operator = await queue((await add(null)).id, at(20));
      const first = await s.queue.claimDue(at(30), at(90), 'first', 32, share);
      const ids = first.map((d) => d.id);
      expect(ids).toContain(third);
      expect(ids).toContain(operator);
      expect(ids.filter((id) => owned.get(id) === a.id)).toHaveLength(8);
      expect(ids.filter((id) => owned.get(id) === b.id)).toHaveLength(8);
      expect(first.find((d) => d.id === operator)?.operator).toBe(true);
      expect(first.find((d) => d.id === third)?.operator).toBe(false);
      // The caps count leases whichever claim holds them: another instance takes none of the backlogs.
      expect(await s.queue.claimDue(at(31), at(90), 'second', 32, share)).toEqual([]);
      // With the users' share spent, only operator endpoints' deliveries are claimed.
      const more = [await queue((await add(c.id)).id, at(25)), await queue((await add(null)).id, at(25))];
      expect((await s.queue.claimDue(at(32), at(90), 'third', 32, { forUsers: 0, perOwner: 8 })).map((d) => d.id)).toEqual([more[1]]);
      expect((await s.queue.claimDue(at(33), at(90), 'fourth', 32, share)).map((d) => d.id)).toEqual([more[0]]);
    });

    it('hands slots out round-robin over owners, not earliest due first', async () => {
      await drain(at(200));
      const [a, c] = [await insertUser(s.users), await insertUser(s.users)];
      const backlog = [];
      for (let i = 0; i < 3; i++) backlog.push(await queue((await add(a.id)).id, at(150)));
      const third = await queue((await add(c.id)).id, at(160));
      const operator = await queue((await add(null)).id, at(170));
      const claimed = (await s.queue.claimDue(at(200), at(260), 'rr', 3, share)).map((d) => d.id);
      expect(claimed).toHaveLength(3);
      expect(claimed).toEqual(expect.arrayContaining([third, operator]));
      expect(backlog.filter((id) => claimed.includes(id))).toHaveLength(1);
    });

    it('pauses an endpoint after failed attempts in a row, probes it with one delivery once the pause ends, and resumes it on success', async () => {
      await drain(at(400));
      const user = await insertUser(s.users);
      const e = await add(user.id);
      const other = await add(user.id);
      for (let i = 0; i < 8; i++) await queue(e.id, at(300));
      const changes: BreakerChange[] = [];
      const audit = (change: BreakerChange) => {
        changes.push(change);
        return auditEvent({ type: `webhook.${change.change}`, userId: change.ownerUserId, subject: { type: 'webhook', id: change.endpointId } }, SYSTEM_CONTEXT, Date.parse(at(400)));
      };
      // A success in between resets the count: only failures in a row pause.
      let n = 400;
      const attempt = async (ok: boolean) => {
        const [d] = await s.queue.claimDue(at(n), at(n + 30), `t${n}`, 1);
        expect(d?.url).toBe(e.url);
        expect(await s.queue.recordAttempt(d?.id ?? '', `t${n}`, outcome(ok, n), audit)).toBe(true);
        n += 1;
      };
      for (let i = 0; i < BREAKER_THRESHOLD - 1; i++) await attempt(false);
      await attempt(true);
      for (let i = 0; i < BREAKER_THRESHOLD - 1; i++) await attempt(false);
      expect(changes).toEqual([]);
      expect((await s.webhooks.findEndpoint(e.id, user.id))?.paused).toBeUndefined();
      await attempt(false);
      const pausedUntil = at(n - 1 + 60);
      expect(changes).toEqual([{ endpointId: e.id, ownerUserId: user.id, change: 'paused', consecutiveFailures: BREAKER_THRESHOLD, pausedUntil }]);
      expect((await s.webhooks.findEndpoint(e.id, user.id))?.paused).toEqual({ consecutiveFailures: BREAKER_THRESHOLD, until: pausedUntil });
      expect((await s.webhooks.listEndpoints(user.id)).find((x) => x.id === other.id)?.paused).toBeUndefined();

      // Paused: nothing of it is claimed, though its deliveries are due.
      expect(await s.queue.claimDue(at(n + 10), at(n + 100), 'paused', 10)).toEqual([]);
      // Once the pause ends, one probe at a time, on every instance.
      const [probe, ...rest] = await s.queue.claimDue(pausedUntil, at(n + 200), 'probe', 10);
      expect(rest).toEqual([]);
      expect(await s.queue.claimDue(pausedUntil, at(n + 200), 'other-instance', 10)).toEqual([]);
      expect(await s.queue.recordAttempt(probe?.id ?? '', 'probe', outcome(true, n + 61), audit)).toBe(true);
      expect(changes.at(-1)).toEqual({ endpointId: e.id, ownerUserId: user.id, change: 'resumed', consecutiveFailures: 0, pausedUntil: null });
      expect((await s.webhooks.findEndpoint(e.id, user.id))?.paused).toBeUndefined();
      expect((await s.audit.list({ userId: user.id, limit: 2 })).map((x) => x.type)).toEqual(['webhook.resumed', 'webhook.paused']);
      // Resumed: two at a time again.
      expect(await s.queue.claimDue(at(n + 62), at(n + 200), 'after', 10)).toHaveLength(2);
    });

    it('a failed probe pauses the endpoint again, twice as long', async () => {
      await drain(at(1000));
      const user = await insertUser(s.users);
      const e = await add(user.id);
      for (let i = 0; i < BREAKER_THRESHOLD + 2; i++) await queue(e.id, at(900));
      for (let i = 0; i < BREAKER_THRESHOLD; i++) {
        const [d] = await s.queue.claimDue(at(1000 + i), at(1030), `f${i}`, 1);
        await s.queue.recordAttempt(d?.id ?? '', `f${i}`, outcome(false, 1000 + i));
      }
      const first = (await s.webhooks.findEndpoint(e.id, undefined))?.paused?.until ?? '';
      expect(first).toBe(at(1004 + 60));
      const [probe] = await s.queue.claimDue(first, at(1200), 'probe', 10);
      expect(await s.queue.recordAttempt(probe?.id ?? '', 'probe', outcome(false, 1064))).toBe(true);
      expect((await s.webhooks.findEndpoint(e.id, undefined))?.paused).toEqual({ consecutiveFailures: BREAKER_THRESHOLD + 1, until: at(1064 + 120) });
      expect(await s.queue.claimDue(at(1064 + 119), at(1300), 'early', 10)).toEqual([]);
    });
  });
}
