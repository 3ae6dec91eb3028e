import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AuditDraft, type AuditEvent, auditEvent, type RequestContext } from '../../src/audit/events.js';
import { at, insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

const CONTEXT: RequestContext = { actor: { type: 'user', id: null }, address: '192.0.2.1', userAgent: 'agent', requestId: randomUUID() };

/** An event of `userId` at second `n` of the fixture's minute. */
const event = (userId: string | null, n: number, draft: Partial<AuditDraft> = {}): AuditEvent =>
  auditEvent({ type: 'token.created', userId, subject: null, ...draft }, CONTEXT, Date.parse(at(n)));

/**
 * The audit log's store (contract §9) on every database: pages newest first, filters, retention,
 * and the rule that an event commits with its change or not at all.
 */
export function auditStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`audit store contract: ${name}`, () => {
    const stores = useStores(harness);

    it('reads back every field of an event as recorded', async () => {
      const user = await insertUser(stores.users);
      const recorded = event(user.id, 1, { type: 'token.revoked', subject: { type: 'token', id: randomUUID() }, details: { token_type: 'api_token', scopes: ['a:b'], expires_at: null } });
      await stores.audit.record(recorded);
      const [read] = await stores.audit.list({ userId: user.id, limit: 10 });
      expect(read).toEqual({ ...recorded, seq: read?.seq });
    });

    it("lists one user's events newest first, from a position, of a type, in a time range", async () => {
      const [a, b] = [await insertUser(stores.users), await insertUser(stores.users)];
      const mine = [event(a.id, 1), event(a.id, 2, { type: 'app.registered' }), event(a.id, 3), event(a.id, 4)];
      for (const e of [mine[0], event(b.id, 1), mine[1], event(null, 2, { type: 'login.failed' }), mine[2], mine[3]]) if (e) await stores.audit.record(e);
      const ids = (list: Array<{ id: string }>) => list.map((e) => e.id);
      const all = await stores.audit.list({ userId: a.id, limit: 10 });
      expect(ids(all)).toEqual(ids([...mine].reverse()));
      const [, second] = all;
      expect(ids(await stores.audit.list({ userId: a.id, limit: 10, beforeSeq: second?.seq ?? 0 }))).toEqual(ids([mine[1], mine[0]] as AuditEvent[]));
      expect(ids(await stores.audit.list({ userId: a.id, limit: 2 }))).toEqual(ids([mine[3], mine[2]] as AuditEvent[]));
      expect(ids(await stores.audit.list({ userId: a.id, limit: 10, type: 'app.registered' }))).toEqual(ids([mine[1]] as AuditEvent[]));
      expect(ids(await stores.audit.list({ userId: a.id, limit: 10, since: at(2), until: at(4) }))).toEqual(ids([mine[2], mine[1]] as AuditEvent[]));
      // Everyone's log (the operator's) holds the events of nobody's account too.
      expect((await stores.audit.list({ limit: 10, type: 'login.failed' }))[0]?.userId).toBeNull();
    });

    it('prunes events that occurred before a time, and only those', async () => {
      const user = await insertUser(stores.users);
      const [old, kept] = [event(user.id, 1), event(user.id, 30)];
      await stores.audit.record(old);
      await stores.audit.record(kept);
      expect(await stores.audit.prune(at(2))).toBeGreaterThanOrEqual(1);
      expect((await stores.audit.list({ userId: user.id, limit: 10 })).map((e) => e.id)).toEqual([kept.id]);
    });

    describe('an event and its change commit together or not at all', () => {
      /** An event that cannot be written: it has no actor type, which the table requires. */
      const unwritable = async (userId: string): Promise<AuditEvent> => ({ ...event(userId, 5), actor: { type: null as unknown as 'user', id: null } });

      it('a revocation whose event fails is not made, nor announced', async () => {
        const user = await insertUser(stores.users);
        const token = newToken(user.id);
        await stores.tokens.insert(token);
        const before = await stores.changes.latestId();
        const bad = await unwritable(user.id);
        await expect(stores.tokens.revoke(token.id, user.id, at(6), () => bad)).rejects.toThrow();
        expect((await stores.tokens.findByDigest(token.digest))?.revoked).toBe(false);
        expect(await stores.changes.latestId()).toBe(before);
        // And once the event can be written, both happen.
        expect(await stores.tokens.revoke(token.id, user.id, at(6), () => event(user.id, 6, { type: 'token.revoked' }))).toBe(true);
        expect((await stores.audit.list({ userId: user.id, limit: 1 }))[0]?.type).toBe('token.revoked');
      });

      it('a token, a session, an app or a user whose event fails is not created', async () => {
        const user = await insertUser(stores.users);
        const bad = await unwritable(user.id);
        const token = newToken(user.id);
        await expect(stores.tokens.insert(token, bad)).rejects.toThrow();
        expect(await stores.tokens.findByDigest(token.digest)).toBeUndefined();
        const session = randomUUID();
        await expect(stores.sessions.insert({ id: session, userId: user.id, createdAt: at(1), expiresAt: at(50) }, bad)).rejects.toThrow();
        expect(await stores.sessions.findById(session)).toBeUndefined();
        const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
        await expect(stores.apps.insertWithToken(app, newToken(user.id, { kind: 'app', appId: app.id }), [bad])).rejects.toThrow();
        expect(await stores.apps.find(app.id, user.id)).toBeUndefined();
        const id = randomUUID();
        await expect(stores.users.insert({ id, email: `${id}@example.com`, username: id.slice(0, 12), passwordHash: 'x', createdAt: at(1) }, bad)).rejects.toThrow();
        expect(await stores.users.findById(id)).toBeUndefined();
      });

      it('a change that fails leaves no event', async () => {
        const user = await insertUser(stores.users);
        const clash = event(null, 7, { type: 'user.signed_up' });
        await expect(stores.users.insert({ id: randomUUID(), email: user.email, username: 'someone_else', passwordHash: 'x', createdAt: at(7) }, clash)).rejects.toThrow();
        expect((await stores.audit.list({ limit: 1000 })).map((e) => e.id)).not.toContain(clash.id);
      });
    });
  });
}
