import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppStore } from '../../src/apps/store.js';
import type { ChangeStore } from '../../src/changes/store.js';
import type { Database } from '../../src/db/database.js';
import { isUniqueViolation } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { up } from '../../src/db/migrations/0009_nfc_emails.js';
import { up as up0010 } from '../../src/db/migrations/0010_client_addresses.js';
import type { KeyStore } from '../../src/keys/store.js';
import type { SessionStore } from '../../src/account/session-store.js';
import type { TokenStore } from '../../src/tokens/store.js';
import type { UserStore } from '../../src/account/user-store.js';
import { at, insertUser, newToken, openStores, type StoreHarness } from './fixture.js';

export type { StoreHarness } from './fixture.js';

/**
 * The behaviour every store must have, run against a real database of each dialect (Lucia's
 * adapter-test idea): the SQL is dialect-neutral, and this is what proves it.
 */
export function storeContract(name: string, harness: () => StoreHarness): void {
  describe(`store contract: ${name}`, () => {
    let h: StoreHarness;
    let database: Database;
    let users: UserStore;
    let sessions: SessionStore;
    let tokens: TokenStore;
    let apps: AppStore;
    let keys: KeyStore;
    let changes: ChangeStore;

    beforeAll(async () => {
      h = harness();
      ({ database, users, sessions, tokens, apps, keys, changes } = await openStores(h));
    });
    afterAll(async () => {
      await database.close();
      await h.cleanup();
    });

    const newUser = (username?: string) => insertUser(users, username);

    it('migrations are idempotent', async () => {
      const again = await migrateToLatest(database.db);
      expect(again.results).toEqual([]);
    });

    describe('users', () => {
      it('inserts and finds by email and id', async () => {
        const user = await newUser();
        expect(await users.findByEmail(user.email)).toEqual({ ...user, emailVerifiedAt: null });
        expect(await users.findById(user.id)).toEqual({ ...user, emailVerifiedAt: null });
        expect(await users.findById(randomUUID())).toBeUndefined();
      });

      it('refuses a duplicate email or a username differing only in case, as a unique violation', async () => {
        const user = await newUser();
        const dup = { ...user, id: randomUUID(), username: 'someone_else' };
        await expect(users.insert(dup)).rejects.toSatisfy(isUniqueViolation);
        const sameName = { ...user, id: randomUUID(), email: 'other@example.com', username: user.username.toUpperCase() };
        await expect(users.insert(sameName)).rejects.toSatisfy(isUniqueViolation);
        expect(await users.findTaken(user.email, user.username.toUpperCase())).toEqual({ email: true, username: true });
        expect(await users.findTaken('free@example.com', 'free_name')).toEqual({ email: false, username: false });
      });

      it('migration 0009 brings stored emails to NFC, and leaves one whose NFC form another account has', async () => {
        const tag = randomUUID().slice(0, 8);
        const insert = async (email: string) => {
          const user = { id: randomUUID(), email, username: `n_${randomUUID().slice(0, 8)}`, passwordHash: '$argon2id$x', createdAt: at(0) };
          await users.insert(user);
          return user;
        };
        // Accounts made before the rule: one decomposed email, and a decomposed twin of a composed one.
        const alone = await insert(`jose\u0301-${tag}@example.com`);
        const composed = await insert(`ren\u00e9-${tag}@example.com`);
        const twin = await insert(`rene\u0301-${tag}@example.com`);
        // As the migrator calls it: with a database of no particular schema.
        const migrate = () => up(database.db as unknown as Kysely<unknown>);
        await migrate();
        expect((await users.findById(alone.id))?.email).toBe(`jos\u00e9-${tag}@example.com`);
        expect((await users.findById(composed.id))?.email).toBe(composed.email);
        expect((await users.findById(twin.id))?.email).toBe(twin.email);
        // Run again (as every start does): nothing changes.
        await migrate();
        expect((await users.findByEmail(`jos\u00e9-${tag}@example.com`))?.id).toBe(alone.id);
      });

      it('migration 0010 clears stored client addresses that are none (a forwarded entry passed on as written), and keeps real ones', async () => {
        const user = await newUser();
        const db = database.db;
        const junk = ['a'.repeat(65), '<img src=x>', 'fe80::1%' + 'x'.repeat(70)];
        const kept = ['203.0.113.7', '2001:db8::1', '::ffff:192.0.2.1', 'fe80::1%eth0'];
        const sessionIds: string[] = [];
        const tokenIds: string[] = [];
        for (const address of [...junk, ...kept]) {
          const session = randomUUID();
          await sessions.insert({ id: session, userId: user.id, createdAt: at(1), expiresAt: at(50) });
          await db.updateTable('sessions').set({ client_address: address }).where('id', '=', session).execute();
          sessionIds.push(session);
          const token = newToken(user.id);
          await tokens.insert(token);
          await db.updateTable('tokens').set({ last_used_ip: address }).where('id', '=', token.id).execute();
          tokenIds.push(token.id);
          await db
            .insertInto('audit_events')
            .values({ id: randomUUID(), type: 'login.failed', occurred_at: at(1), user_id: user.id, actor_type: 'anonymous', actor_id: null, subject_type: null, subject_id: null, client_address: address, user_agent: null, request_id: null, details: '{}' })
            .execute();
        }
        // As the migrator calls it, twice (every start runs it until it is recorded).
        for (let i = 0; i < 2; i++) await up0010(db as unknown as Kysely<unknown>);
        const expected = [...junk.map(() => null), ...kept];
        const sessionsNow = await db.selectFrom('sessions').select(['id', 'client_address']).where('id', 'in', sessionIds).execute();
        expect(sessionIds.map((id) => sessionsNow.find((r) => r.id === id)?.client_address)).toEqual(expected);
        const tokensNow = await db.selectFrom('tokens').select(['id', 'last_used_ip']).where('id', 'in', tokenIds).execute();
        expect(tokenIds.map((id) => tokensNow.find((r) => r.id === id)?.last_used_ip)).toEqual(expected);
        const auditNow = await db.selectFrom('audit_events').select('client_address').where('user_id', '=', user.id).orderBy('seq').execute();
        expect(auditNow.map((r) => r.client_address)).toEqual(expected);
      });

      it('deleting a user cascades to sessions, apps and tokens and records a change', async () => {
        const user = await newUser();
        await sessions.insert({ id: randomUUID(), userId: user.id, createdAt: at(1), expiresAt: at(50) });
        const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
        const appToken = newToken(user.id, { kind: 'app', appId: app.id, scopes: [] });
        await apps.insertWithToken(app, appToken);
        const before = await changes.latestId();
        expect(await users.delete(user.id, at(2))).toBe(true);
        expect(await users.delete(user.id, at(2))).toBe(false);
        expect(await tokens.findByDigest(appToken.digest)).toBeUndefined();
        expect(await apps.find(app.id, user.id)).toBeUndefined();
        expect((await changes.listAfter(before)).map((c) => [c.kind, c.ref])).toEqual([['user', user.id]]);
      });
    });

    describe('sessions', () => {
      it('revokes once and records the change', async () => {
        const user = await newUser();
        const id = randomUUID();
        await sessions.insert({ id, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        expect((await sessions.findById(id))?.revokedAt).toBeNull();
        const before = await changes.latestId();
        expect(await sessions.revoke(id, at(3))).toBe(true);
        expect(await sessions.revoke(id, at(4))).toBe(false);
        expect((await sessions.findById(id))?.revokedAt).toBe(at(3));
        expect((await changes.listAfter(before)).map((c) => c.kind)).toEqual(['session']);
      });

      it('deletes only the sessions that expired before the given time', async () => {
        const user = await newUser();
        const expired = { id: randomUUID(), userId: user.id, createdAt: at(1), expiresAt: at(5) };
        const live = { id: randomUUID(), userId: user.id, createdAt: at(1), expiresAt: at(50) };
        await sessions.insert(expired);
        await sessions.insert(live);
        expect(await sessions.deleteExpired(at(10))).toBe(1);
        expect(await sessions.findById(expired.id)).toBeUndefined();
        expect(await sessions.findById(live.id)).toBeDefined();
        expect(await sessions.deleteExpired(at(10))).toBe(0);
      });

      it('parallel revocations of one session: exactly one wins', async () => {
        const user = await newUser();
        const id = randomUUID();
        await sessions.insert({ id, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        const results = await Promise.all(Array.from({ length: 8 }, () => sessions.revoke(id, at(3))));
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('tokens', () => {
      it('finds by digest with its owner and app, never by anything else', async () => {
        const user = await newUser();
        const token = newToken(user.id);
        await tokens.insert(token);
        const found = await tokens.findByDigest(token.digest);
        expect(found).toMatchObject({
          revoked: false,
          owner: { id: user.id, username: user.username, email: user.email },
          app: null,
          token: { id: token.id, kind: 'api', scopes: ['apps:read'], lastUsedAt: null },
        });
        expect(await tokens.findByDigest('nope')).toBeUndefined();
      });

      it('lists active tokens of one kind, newest first, without revoked or expired ones', async () => {
        const user = await newUser();
        const old = newToken(user.id, { name: 'old', createdAt: at(1) });
        const fresh = newToken(user.id, { name: 'fresh', createdAt: at(2) });
        const expired = newToken(user.id, { name: 'expired', createdAt: at(3), expiresAt: at(4) });
        const revoked = newToken(user.id, { name: 'revoked', createdAt: at(5) });
        for (const t of [old, fresh, expired, revoked]) await tokens.insert(t);
        await tokens.revoke(revoked.id, user.id, at(6));
        const active = { state: 'active', now: at(10), endedSince: at(0) } as const;
        expect((await tokens.list({ ...active, owner: { userId: user.id } })).map((t) => t.name)).toEqual(['fresh', 'old']);
        expect(await tokens.list({ ...active, owner: { appId: randomUUID() } })).toEqual([]);
      });

      it("revokes only the owner's token, once", async () => {
        const owner = await newUser();
        const other = await newUser();
        const token = newToken(owner.id);
        await tokens.insert(token);
        expect(await tokens.revoke(token.id, other.id, at(2))).toBe(false);
        expect(await tokens.revoke(token.id, owner.id, at(2))).toBe(true);
        expect(await tokens.revoke(token.id, owner.id, at(3))).toBe(false);
        expect((await tokens.findByDigest(token.digest))?.revoked).toBe(true);
      });

      it('records last use without ever moving it backwards', async () => {
        const user = await newUser();
        const token = newToken(user.id);
        await tokens.insert(token);
        await tokens.recordUsage(new Map([[token.id, { at: at(20), address: '203.0.113.20', scopes: [] }]]));
        await tokens.recordUsage(new Map([[token.id, { at: at(10), address: '203.0.113.10', scopes: [] }]]));
        expect((await tokens.findByDigest(token.digest))?.token.lastUsedAt).toBe(at(20));
      });

      it('concurrent inserts commit together, and one bad row fails only its own insert', async () => {
        const user = await newUser();
        const existing = newToken(user.id);
        await tokens.insert(existing);
        const good = Array.from({ length: 6 }, () => newToken(user.id));
        const bad = newToken(user.id, { digest: existing.digest });
        const results = await Promise.allSettled([...good.slice(0, 3), bad, ...good.slice(3)].map((t) => tokens.insert(t)));
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
        expect((results[3] as PromiseRejectedResult).reason).toSatisfy(isUniqueViolation);
        for (const t of good) expect((await tokens.findByDigest(t.digest))?.token.id).toBe(t.id);
      });

      it('refuses a duplicate digest', async () => {
        const user = await newUser();
        const token = newToken(user.id);
        await tokens.insert(token);
        await expect(tokens.insert({ ...token, id: randomUUID() })).rejects.toSatisfy(isUniqueViolation);
      });
    });

    describe('apps', () => {
      it('inserts an app with its first token atomically, lists newest first', async () => {
        const user = await newUser();
        const first = { id: randomUUID(), userId: user.id, name: 'first', description: 'd', createdAt: at(1) };
        const second = { ...first, id: randomUUID(), name: 'second', createdAt: at(2) };
        await apps.insertWithToken(first, newToken(user.id, { kind: 'app', appId: first.id }));
        await apps.insertWithToken(second, newToken(user.id, { kind: 'app', appId: second.id }));
        expect((await apps.listByUser(user.id)).map((a) => a.name)).toEqual(['second', 'first']);
        // A failing token insert (duplicate digest) leaves no app behind.
        const taken = newToken(user.id, { kind: 'app', appId: first.id });
        await tokens.insert({ ...taken, appId: first.id });
        const orphan = { ...first, id: randomUUID(), name: 'orphan' };
        await expect(apps.insertWithToken(orphan, { ...taken, id: randomUUID(), appId: orphan.id })).rejects.toSatisfy(isUniqueViolation);
        expect(await apps.find(orphan.id, user.id)).toBeUndefined();
      });

      it("adds tokens only to the owner's existing app", async () => {
        const owner = await newUser();
        const other = await newUser();
        const app = { id: randomUUID(), userId: owner.id, name: 'a', description: '', createdAt: at(1) };
        await apps.insertWithToken(app, newToken(owner.id, { kind: 'app', appId: app.id }));
        expect(await apps.insertToken(newToken(owner.id, { kind: 'app', appId: app.id }))).toBe(true);
        expect(await apps.insertToken(newToken(other.id, { kind: 'app', appId: app.id }))).toBe(false);
        expect(await apps.insertToken(newToken(owner.id, { kind: 'app', appId: randomUUID() }))).toBe(false);
      });

      it('deleting an app deletes its tokens; a concurrent token insert never leaves an orphan', async () => {
        const user = await newUser();
        const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
        const first = newToken(user.id, { kind: 'app', appId: app.id });
        await apps.insertWithToken(app, first);
        const racing = Array.from({ length: 5 }, () => apps.insertToken(newToken(user.id, { kind: 'app', appId: app.id })));
        const [deleted] = await Promise.all([apps.delete(app.id, user.id, at(2)), ...racing]);
        expect(deleted).toBe(true);
        expect(await tokens.findByDigest(first.digest)).toBeUndefined();
        const left = await database.db.selectFrom('tokens').select('id').where('app_id', '=', app.id).execute();
        expect(left).toEqual([]);
      });
    });

    describe('signing keys', () => {
      const key = (kid: string, createdAt: string) => ({ kid, alg: 'EdDSA', publicJwk: '{}', privateJwk: '{}', createdAt, retiredAt: null });

      it('rotation retires the active key, drops long-retired ones, or all others when immediate', async () => {
        await keys.rotate(key('k1', at(1)));
        await keys.rotate(key('k2', at(2)));
        let listed = await keys.list();
        expect(listed.filter((k) => ['k1', 'k2'].includes(k.kid)).map((k) => [k.kid, k.retiredAt])).toEqual([
          ['k1', at(2)],
          ['k2', null],
        ]);
        await keys.rotate(key('k3', at(3)), { dropBefore: at(3) });
        listed = await keys.list();
        expect(listed.map((k) => k.kid)).not.toContain('k1');
        await keys.rotate(key('k4', at(4)), { dropAllOthers: true });
        expect((await keys.list()).map((k) => k.kid)).toEqual(['k4']);
      });
    });

    describe('change log', () => {
      it('hands out changes in commit order, even when written in parallel', async () => {
        const user = await newUser();
        const ids = Array.from({ length: 20 }, () => randomUUID());
        for (const id of ids) await sessions.insert({ id, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        const before = await changes.latestId();
        await Promise.all(ids.map((id) => sessions.revoke(id, at(2))));
        const after = await changes.listAfter(before);
        expect(after.map((c) => c.ref).sort()).toEqual([...ids].sort());
        expect(after.map((c) => c.id)).toEqual([...after.map((c) => c.id)].sort((a, b) => a - b));
        expect(await changes.latestId()).toBe(after.at(-1)?.id);
      });

      it('reads in pages of the size asked for', async () => {
        const first = await changes.listAfter(0, 2);
        expect(first).toHaveLength(2);
        expect((await changes.listAfter(first[1]?.id ?? 0, 1))[0]?.id).toBeGreaterThan(first[1]?.id ?? 0);
      });

      const revokeAt = async (second: number) => {
        const user = await newUser();
        const id = randomUUID();
        await sessions.insert({ id, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        await sessions.revoke(id, at(second));
        return changes.latestId();
      };

      it('prunes a prefix of the log: every entry before the first one recorded after the cutoff', async () => {
        const kept = await revokeAt(40);
        // Recorded later but stamped earlier (another instance's clock is behind): kept, being after `kept`.
        const skewed = await revokeAt(35);
        const deleted = await changes.prune(at(38));
        expect(deleted).toBeGreaterThan(0);
        expect((await changes.listAfter(0)).map((c) => c.id)).toEqual([kept, skewed]);
        expect(await changes.bounds()).toEqual({ oldest: kept, latest: skewed });
        expect(await changes.prune(at(38))).toBe(0);
      });

      it('never prunes the newest entry, so ids are never handed out again and a reader can tell a gap', async () => {
        const newest = await revokeAt(45);
        await changes.prune('9999-01-01T00:00:00.000Z');
        expect((await changes.listAfter(0)).map((c) => c.id)).toEqual([newest]);
        expect(await changes.bounds()).toEqual({ oldest: newest, latest: newest });
        expect(await revokeAt(46)).toBeGreaterThan(newest);
      });
    });
  });
}
