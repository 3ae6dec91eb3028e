import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AuditEvent, auditEvent, type AuditType, SYSTEM_CONTEXT } from '../../src/audit/events.js';
import { toProblem } from '../../src/http/problem.js';
import type { RevokedToken, TokenRecord } from '../../src/tokens/store.js';
import { at, insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

/**
 * What the token lifecycle needs of every store (contract §8): usage sets that concurrent flushes
 * add to, compare-and-set narrowing, rotation in one transaction, and sweeps that revoke each token
 * once however many instances run them. SQLite always, PostgreSQL where it is reachable.
 */
export function lifecycleStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`token lifecycle store contract: ${name}`, () => {
    const s = useStores(harness);

    async function inserted(overrides: Parameters<typeof newToken>[1] = {}): Promise<TokenRecord & { digest: string }> {
      const user = await insertUser(s.users);
      const token = newToken(user.id, overrides);
      await s.tokens.insert(token);
      return { ...token, lastUsedAt: null, replacedBy: null };
    }
    const eventsOf = async (id: string) =>
      (await s.changes.listAfter(0, 10_000)).filter((c) => c.ref === id).map((c) => c.event?.type ?? null);
    /** The audit log's types for a token, oldest first: each written with its change, or not at all. */
    const auditOf = async (id: string) =>
      (await s.audit.list({ limit: 10_000 })).filter((e) => e.subject?.id === id).map((e) => e.type).reverse();
    const audit = (type: AuditType, token: { id: string; userId: string }): AuditEvent =>
      auditEvent({ type, userId: token.userId, subject: { type: 'token', id: token.id } }, SYSTEM_CONTEXT, Date.parse(at(1)));
    const each = (type: AuditType) => (token: RevokedToken) => audit(type, token);
    const rotation = (old: { id: string; userId: string }) => (revoked: RevokedToken[]) => [audit('token.rotated', old), ...revoked.map(each('token.revoked'))];

    it('usage adds scopes to the set (concurrent flushes included) and keeps the newest address', async () => {
      const token = await inserted({ scopes: ['apps:read', 'tokens:read'] });
      await Promise.all([
        s.tokens.recordUsage(new Map([[token.id, { at: at(10), address: '192.0.2.10', scopes: ['apps:read'] }]])),
        s.tokens.recordUsage(new Map([[token.id, { at: at(20), address: '192.0.2.20', scopes: ['tokens:read', 'apps:read'] }]])),
      ]);
      await s.tokens.recordUsage(new Map([[token.id, { at: at(5), address: '192.0.2.5', scopes: [] }]]));
      const detail = await s.lifecycle.findActive(token.id, token.userId, at(30));
      expect(detail).toMatchObject({ lastUsedAt: at(20), lastUsedIp: '192.0.2.20', scopesUsed: ['apps:read', 'tokens:read'] });
    });

    it('usage of a token deleted meanwhile is dropped without failing the flush', async () => {
      const token = await inserted();
      const kept = await inserted();
      await s.users.delete(token.userId, at(2));
      await s.tokens.recordUsage(
        new Map([
          [token.id, { at: at(10), address: null, scopes: ['apps:read'] }],
          [kept.id, { at: at(10), address: null, scopes: ['apps:read'] }],
        ]),
      );
      expect((await s.lifecycle.findActive(kept.id, kept.userId, at(11)))?.scopesUsed).toEqual(['apps:read']);
    });

    it('finds only the owner\'s active tokens', async () => {
      const token = await inserted({ expiresAt: at(50) });
      const stranger = await insertUser(s.users);
      expect(await s.lifecycle.findActive(token.id, stranger.id, at(1))).toBeUndefined();
      expect(await s.lifecycle.findActive(token.id, token.userId, at(50))).toBeUndefined();
      expect((await s.lifecycle.findActive(token.id, token.userId, at(49)))?.id).toBe(token.id);
    });

    it('updates only from the state the caller checked, and records token.updated with it', async () => {
      const token = await inserted({ scopes: ['apps:read', 'tokens:read'], allowedCidrs: ['10.0.0.0/8'] });
      expect(await s.lifecycle.update(token, { scopes: ['apps:read'], allowedCidrs: ['10.1.0.0/16'] }, at(2), audit('token.updated', token))).toBe(true);
      // The same expected state again: it has changed since, so nothing happens.
      expect(await s.lifecycle.update(token, { scopes: ['tokens:read'] }, at(3), audit('token.updated', token))).toBe(false);
      expect(await auditOf(token.id)).toEqual(['token.updated']);
      const found = await s.tokens.findByDigest(token.digest);
      expect(found?.token).toMatchObject({ scopes: ['apps:read'], allowedCidrs: ['10.1.0.0/16'] });
      const changes = (await s.changes.listAfter(0, 10_000)).filter((c) => c.ref === token.id);
      expect(changes.map((c) => c.event)).toEqual([{ type: 'token.updated', data: { token_id: token.id, scopes: ['apps:read'] } }]);
    });

    it('rotates once: the successor is stored, the old token expires at the grace end and cannot be rotated again', async () => {
      const old = await inserted({ expiresAt: at(59) });
      const next = newToken(old.userId);
      expect(await s.lifecycle.rotate(old, next, at(30), at(1), rotation(old))).toBe(true);
      expect(await s.lifecycle.rotate(old, newToken(old.userId), at(30), at(2), rotation(old))).toBe(false);
      expect(await auditOf(old.id)).toEqual(['token.rotated']);
      expect((await s.tokens.findByDigest(old.digest))?.token).toMatchObject({ expiresAt: at(30), replacedBy: next.id });
      expect((await s.tokens.findByDigest(next.digest))?.revoked).toBe(false);
      expect(await eventsOf(old.id)).toEqual(['token.updated']);
    });

    it('a rotation read before a narrowing gave the new token the scopes and networks the narrowing removed: now it is refused', async () => {
      const old = await inserted({ scopes: ['apps:read', 'tokens:read'], allowedCidrs: ['10.0.0.0/8'] });
      expect(await s.lifecycle.update(old, { scopes: ['apps:read'] }, at(1), audit('token.updated', old))).toBe(true);
      const stale = newToken(old.userId, { scopes: old.scopes, allowedCidrs: old.allowedCidrs });
      expect(await s.lifecycle.rotate(old, stale, at(30), at(2), rotation(old))).toBe(false);
      expect(await s.tokens.findByDigest(stale.digest)).toBeUndefined();
      const narrowed = { ...old, scopes: ['apps:read'] };
      expect(await s.lifecycle.update(narrowed, { allowedCidrs: ['10.1.0.0/16'] }, at(3), audit('token.updated', old))).toBe(true);
      expect(await s.lifecycle.rotate(narrowed, newToken(old.userId, { scopes: ['apps:read'] }), at(30), at(4), rotation(old))).toBe(false);
      const current = { ...narrowed, allowedCidrs: ['10.1.0.0/16'] };
      expect(await s.lifecycle.rotate(current, newToken(old.userId, { scopes: ['apps:read'], allowedCidrs: ['10.1.0.0/16'] }), at(30), at(5), rotation(old))).toBe(true);
      expect(await auditOf(old.id)).toEqual(['token.updated', 'token.updated', 'token.rotated']);
    });

    it('a rotation read before a rename gave the new token the old name (the rename answered 200 and was lost): now it is refused, to be read again', async () => {
      const old = await inserted();
      expect(await s.lifecycle.update(old, { name: 'renamed' }, at(1), audit('token.updated', old))).toBe(true);
      const stale = newToken(old.userId, { name: old.name });
      expect(await s.lifecycle.rotate(old, stale, at(30), at(2), rotation(old))).toBe(false);
      expect(await s.tokens.findByDigest(stale.digest)).toBeUndefined();
      expect(await s.lifecycle.rotate({ ...old, name: 'renamed' }, newToken(old.userId, { name: 'renamed' }), at(30), at(3), rotation(old))).toBe(true);
    });

    // Regression: a token or app created while its owner's account was being deleted hit the foreign
    // key and answered 500, then a 503 to retry (logged as an error), though the retry could only be
    // refused; the loser of a deadlock (rotation against app deletion) stays a 503.
    it('a write racing the deletion of its account answered 503: its credential went with the account, 401 invalid_token', async () => {
      const error = await s.tokens.insert(newToken(randomUUID())).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).not.toBeNull();
      expect(toProblem(error)).toMatchObject({ code: 'invalid_token', status: 401, headers: { 'www-authenticate': expect.stringContaining('invalid_token') } });
      for (const code of ['40P01', '40001']) expect(toProblem(Object.assign(new Error('x'), { code })).code).toBe('unavailable');
      expect(toProblem(Object.assign(new Error('x'), { code: '23505' })).code).toBe('internal');
    });

    it('a grace never extends an earlier expiry; no grace revokes at once', async () => {
      const soon = await inserted({ expiresAt: at(10) });
      expect(await s.lifecycle.rotate(soon, newToken(soon.userId), at(40), at(1), rotation(soon))).toBe(true);
      expect((await s.tokens.findByDigest(soon.digest))?.token.expiresAt).toBe(at(10));
      const now = await inserted();
      expect(await s.lifecycle.rotate(now, newToken(now.userId), null, at(1), rotation(now))).toBe(true);
      expect((await s.tokens.findByDigest(now.digest))?.revoked).toBe(true);
      expect(await eventsOf(now.id)).toEqual(['token.revoked']);
    });

    it('a rotation whose successor cannot be stored leaves the old token as it was', async () => {
      const old = await inserted();
      const clash = newToken(old.userId, { digest: old.digest });
      await expect(s.lifecycle.rotate(old, clash, null, at(1), rotation(old))).rejects.toThrow();
      expect((await s.tokens.findByDigest(old.digest))?.token.replacedBy).toBeNull();
      expect(await eventsOf(old.id)).toEqual([]);
      expect(await auditOf(old.id)).toEqual([]);
    });

    it('a rotation of a token in its grace revokes the one it replaced, with the audit events given for it', async () => {
      const first = await inserted();
      const second = newToken(first.userId);
      expect(await s.lifecycle.rotate(first, second, at(40), at(1), rotation(first))).toBe(true);
      const secondRecord = { ...second, lastUsedAt: null, replacedBy: null };
      expect(await s.lifecycle.rotate(secondRecord, newToken(first.userId), at(40), at(2), rotation(secondRecord))).toBe(true);
      expect(await auditOf(first.id)).toEqual(['token.rotated', 'token.revoked']);
      expect(await auditOf(second.id)).toEqual(['token.rotated']);
    });

    it('lists an app\'s active tokens for its owner only', async () => {
      const user = await insertUser(s.users);
      const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
      const first = newToken(user.id, { kind: 'app', appId: app.id, createdAt: at(1) });
      await s.apps.insertWithToken(app, first);
      const second = newToken(user.id, { kind: 'app', appId: app.id, createdAt: at(2) });
      await s.apps.insertToken(second);
      const active = { state: 'active', now: at(3), endedSince: at(0) } as const;
      expect((await s.lifecycle.listAppTokens(app.id, user.id, active))?.map((t) => t.id)).toEqual([second.id, first.id]);
      expect(await s.lifecycle.listAppTokens(app.id, (await insertUser(s.users)).id, active)).toBeUndefined();
    });

    it('a token that reached the expiry it was created with stayed unrevoked and unrecorded: the lifetime sweep revokes it once; a rotated one is left to the grace sweep', async () => {
      const ended = await inserted({ expiresAt: at(10) });
      const living = await inserted({ expiresAt: at(30) });
      const rotated = await inserted({ expiresAt: at(50) });
      expect(await s.lifecycle.rotate(rotated, newToken(rotated.userId), at(5), at(1), () => [])).toBe(true);
      const expired = each('token.expired');
      await Promise.all([s.lifecycle.revokeEndedLifetimes(at(20), expired), s.lifecycle.revokeEndedLifetimes(at(20), expired)]);
      expect(await auditOf(ended.id)).toEqual(['token.expired']);
      expect(await eventsOf(ended.id)).toEqual(['token.revoked']);
      expect(await auditOf(living.id)).toEqual([]);
      expect(await auditOf(rotated.id)).toEqual([]);
      expect(await eventsOf(rotated.id)).toEqual(['token.updated']);
    });

    it('sweeps revoke ended graces and idle tokens once, even when run in parallel', async () => {
      const rotated = await inserted();
      expect(await s.lifecycle.rotate(rotated, newToken(rotated.userId), at(20), at(1), () => [])).toBe(true);
      const idle = await inserted({ createdAt: at(1) });
      const busy = await inserted({ createdAt: at(1) });
      await s.tokens.recordUsage(new Map([[busy.id, { at: at(40), address: null, scopes: [] }]]));
      const graceEnded = each('token.expired');
      await Promise.all([s.lifecycle.revokeEndedGraces(at(19), graceEnded), s.lifecycle.revokeEndedGraces(at(19), graceEnded)]);
      expect(await eventsOf(rotated.id)).toEqual(['token.updated']);
      const graces = await Promise.all([s.lifecycle.revokeEndedGraces(at(20), graceEnded), s.lifecycle.revokeEndedGraces(at(20), graceEnded)]);
      expect(await auditOf(rotated.id)).toEqual(['token.expired']);
      expect(await eventsOf(rotated.id)).toEqual(['token.updated', 'token.revoked']);
      expect(graces.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
      const idled = each('token.idle_revoked');
      await Promise.all([s.lifecycle.revokeIdle(at(30), at(50), idled), s.lifecycle.revokeIdle(at(30), at(50), idled)]);
      expect(await eventsOf(idle.id)).toEqual(['token.revoked']);
      expect(await eventsOf(busy.id)).toEqual([]);
      expect(await auditOf(idle.id)).toEqual(['token.idle_revoked']);
      expect(await auditOf(busy.id)).toEqual([]);
    });
  });
}
