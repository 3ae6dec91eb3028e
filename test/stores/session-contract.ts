import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvent, SYSTEM_CONTEXT } from '../../src/audit/events.js';
import type { AuditStore } from '../../src/audit/store.js';
import type { ChangeStore } from '../../src/changes/store.js';
import type { Database } from '../../src/db/database.js';
import type { SessionStore } from '../../src/account/session-store.js';
import type { UserStore } from '../../src/account/user-store.js';
import { at, insertUser, openStores, type StoreHarness } from './fixture.js';

/** The account part of the session store (who, where, last use, ending them), on every dialect. */
export function sessionStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`session store contract: ${name}`, () => {
    let h: StoreHarness;
    let database: Database;
    let users: UserStore;
    let sessions: SessionStore;
    let changes: ChangeStore;
    let audit: AuditStore;

    beforeAll(async () => {
      h = harness();
      ({ database, users, sessions, changes, audit } = await openStores(h));
    });
    afterAll(async () => {
      await database.close();
      await h.cleanup();
    });

    /** A live session of `userId` created at second `created`. */
    async function open(userId: string, created = 1, extra: { clientAddress?: string; userAgent?: string } = {}): Promise<string> {
      const id = randomUUID();
      await sessions.insert({ id, userId, createdAt: at(created), expiresAt: at(50), ...extra });
      return id;
    }

    const eventsSince = async (before: number) => (await changes.listAfter(before)).map((c) => [c.kind, c.ref, c.event]);

    it('keeps where a session was opened; unknown when not given', async () => {
      const user = await insertUser(users);
      const id = await open(user.id, 1, { clientAddress: '2001:db8::1', userAgent: 'Agent/1' });
      expect(await sessions.findById(id)).toMatchObject({ clientAddress: '2001:db8::1', userAgent: 'Agent/1', lastUsedAt: null, revokedAt: null });
      expect(await sessions.findById(await open(user.id))).toMatchObject({ clientAddress: null, userAgent: null });
    });

    it("lists a user's active sessions newest first, without revoked, expired or anyone else's", async () => {
      const user = await insertUser(users);
      const other = await insertUser(users);
      const old = await open(user.id, 1);
      const fresh = await open(user.id, 3);
      const revoked = await open(user.id, 4);
      await sessions.revoke(revoked, at(5));
      await sessions.insert({ id: randomUUID(), userId: user.id, createdAt: at(2), expiresAt: at(6) });
      await open(other.id, 2);
      expect((await sessions.listActive(user.id, at(10))).map((s) => s.id)).toEqual([fresh, old]);
    });

    it("revokes one session of its owner only, once, recording session.revoked", async () => {
      const user = await insertUser(users);
      const other = await insertUser(users);
      const id = await open(user.id);
      const before = await changes.latestId();
      expect(await sessions.revokeOwned(id, other.id, at(6))).toBe(false);
      expect(await sessions.revokeOwned(randomUUID(), user.id, at(6))).toBe(false);
      expect(await sessions.revokeOwned(id, user.id, at(6))).toBe(true);
      expect(await sessions.revokeOwned(id, user.id, at(7))).toBe(false);
      expect(await eventsSince(before)).toEqual([['session', id, { type: 'session.revoked', data: { session_id: id, user_id: user.id } }]]);
      // An expired session is not active: nothing to end.
      const expired = randomUUID();
      await sessions.insert({ id: expired, userId: user.id, createdAt: at(1), expiresAt: at(5) });
      expect(await sessions.revokeOwned(expired, user.id, at(6))).toBe(false);
    });

    it('revokes every other active session of the user, one change each, and no one else', async () => {
      const user = await insertUser(users);
      const stranger = await insertUser(users);
      const keep = await open(user.id);
      const others = [await open(user.id), await open(user.id), await open(user.id)];
      const strangers = await open(stranger.id);
      const before = await changes.latestId();
      expect((await sessions.revokeOthers(user.id, keep, at(8))).sort()).toEqual([...others].sort());
      expect((await eventsSince(before)).map(([kind, ref]) => [kind, ref]).sort()).toEqual(others.map((id) => ['session', id]).sort());
      expect((await sessions.listActive(user.id, at(9))).map((s) => s.id)).toEqual([keep]);
      expect((await sessions.findById(strangers))?.revokedAt).toBeNull();
      expect(await sessions.revokeOthers(user.id, keep, at(9))).toEqual([]);
    });

    it('replaces the password hash and ends the other sessions together', async () => {
      const user = await insertUser(users);
      const keep = await open(user.id);
      const other = await open(user.id);
      expect(await sessions.replacePassword(user.id, '$argon2id$new', keep, at(8))).toEqual([other]);
      expect((await users.findById(user.id))?.passwordHash).toBe('$argon2id$new');
      expect((await sessions.listActive(user.id, at(9))).map((s) => s.id)).toEqual([keep]);
    });

    it('writes the audit events of the sessions a revocation ended, with it; none when it ended none', async () => {
      const user = await insertUser(users);
      const keep = await open(user.id);
      const others = [await open(user.id), await open(user.id)];
      const ended = (revoked: readonly string[]) =>
        revoked.map((id) => auditEvent({ type: 'session.revoked', userId: user.id, subject: { type: 'session', id } }, SYSTEM_CONTEXT, Date.parse(at(8))));
      const logged = async () => (await audit.list({ userId: user.id, limit: 100 })).map((e) => e.subject?.id).sort();
      expect(await sessions.revokeOwned(randomUUID(), user.id, at(8), ended)).toBe(false);
      expect(await logged()).toEqual([]);
      expect(await sessions.revokeOwned(others[0] ?? '', user.id, at(8), ended)).toBe(true);
      expect(await sessions.revokeOthers(user.id, keep, at(8), ended)).toEqual([others[1]]);
      expect(await sessions.replacePassword(user.id, '$argon2id$next', keep, at(9), ended)).toEqual([]);
      expect(await logged()).toEqual([...others].sort());
    });

    it('opens a session for a login only while the password hash is the one it verified', async () => {
      const user = await insertUser(users);
      const session = (id: string) => ({ id, userId: user.id, createdAt: at(1), expiresAt: at(50), clientAddress: '192.0.2.1', userAgent: null });
      const first = randomUUID();
      expect(await sessions.insertForPassword(session(first), user.passwordHash)).toBe(true);
      expect(await sessions.findById(first)).toMatchObject({ userId: user.id, clientAddress: '192.0.2.1', userAgent: null, revokedAt: null });
      await sessions.replacePassword(user.id, '$argon2id$changed', first, at(2));
      const late = randomUUID();
      expect(await sessions.insertForPassword(session(late), user.passwordHash)).toBe(false);
      expect(await sessions.findById(late)).toBeUndefined();
      expect(await sessions.insertForPassword({ ...session(randomUUID()), userId: randomUUID() }, user.passwordHash)).toBe(false);
    });

    // Regression: on PostgreSQL a login read the old hash past a password change not yet committed,
    // and its session, committed after the change ended the others, stayed alive.
    it('a login racing an uncommitted password change opened a session with the old password: it waits, then opens none', async () => {
      const user = await insertUser(users);
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let changed = () => {};
      const updated = new Promise<void>((resolve) => (changed = resolve));
      const change = database.db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ password_hash: '$argon2id$changed' }).where('id', '=', user.id).execute();
        changed();
        await held;
        await trx.updateTable('sessions').set({ revoked_at: at(3) }).where('user_id', '=', user.id).where('revoked_at', 'is', null).execute();
      });
      await updated;
      const id = randomUUID();
      const login = sessions.insertForPassword({ id, userId: user.id, createdAt: at(2), expiresAt: at(50), clientAddress: null, userAgent: null }, user.passwordHash);
      // Give a login that does not wait every chance to finish before the change commits.
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      await change;
      expect(await login).toBe(false);
      expect(await sessions.findById(id)).toBeUndefined();
    });

    it('upgrades a password hash only over the one it replaces', async () => {
      const user = await insertUser(users);
      expect(await users.upgradePasswordHash(user.id, '$argon2id$stronger', user.passwordHash)).toBe(true);
      // A password change committed in between: the upgrade of the old one must not undo it.
      expect(await users.upgradePasswordHash(user.id, '$argon2id$old-upgraded', user.passwordHash)).toBe(false);
      expect((await users.findById(user.id))?.passwordHash).toBe('$argon2id$stronger');
    });

    it('records last use in one batch and never moves it backwards', async () => {
      const user = await insertUser(users);
      const a = await open(user.id);
      const b = await open(user.id);
      await sessions.recordUsage(new Map([[a, at(20)], [b, at(10)]]));
      await sessions.recordUsage(new Map([[a, at(15)], [b, at(12)], [randomUUID(), at(12)]]));
      expect((await sessions.findById(a))?.lastUsedAt).toBe(at(20));
      expect((await sessions.findById(b))?.lastUsedAt).toBe(at(12));
    });
  });
}
