import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppStore } from '../../src/apps/store.js';
import { ChangeStore } from '../../src/changes/store.js';
import type { Database } from '../../src/db/database.js';
import { isUniqueViolation } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { KeyStore } from '../../src/keys/store.js';
import { ServiceCredentialStore } from '../../src/services/store.js';
import { SessionStore } from '../../src/sessions/store.js';
import { TokenStore, type NewToken } from '../../src/tokens/store.js';
import { UserStore } from '../../src/users/store.js';
import type { StoreHarness } from './contract.js';

const at = (n: number) => new Date(Date.UTC(2026, 10, 21, 9, 0, n)).toISOString();

/**
 * What the platform's services rely on in every store (contract §7): the event recorded with each
 * change, and the service credentials. Run on SQLite always and on PostgreSQL where it is reachable.
 */
export function platformStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`platform store contract: ${name}`, () => {
    let h: StoreHarness;
    let database: Database;
    let users: UserStore;
    let sessions: SessionStore;
    let tokens: TokenStore;
    let apps: AppStore;
    let keys: KeyStore;
    let changes: ChangeStore;
    let services: ServiceCredentialStore;

    beforeAll(async () => {
      h = harness();
      database = await h.open();
      await migrateToLatest(database.db);
      const { db } = database;
      users = new UserStore(db);
      sessions = new SessionStore(db);
      tokens = new TokenStore(db);
      apps = new AppStore(db);
      keys = new KeyStore(db);
      changes = new ChangeStore(db);
      services = new ServiceCredentialStore(db);
    });
    afterAll(async () => {
      await database.close();
      await h.cleanup();
    });

    const newUser = async () => {
      const username = `u_${randomUUID().slice(0, 8)}`;
      const user = { id: randomUUID(), email: `${username}@example.com`, username, passwordHash: '$argon2id$x', createdAt: at(0) };
      await users.insert(user);
      return user;
    };
    const newToken = (userId: string, overrides: Partial<NewToken> = {}): NewToken => ({
      id: randomUUID(),
      kind: 'api',
      userId,
      appId: null,
      name: 'token',
      scopes: ['apps:read'],
      hint: 'rz_abcd',
      digest: randomUUID(),
      createdAt: at(1),
      expiresAt: null,
      ...overrides,
    });

    describe('change events', () => {
      it('records with each change what it means to the platform\'s services, in the same transaction', async () => {
        const user = await newUser();
        const api = newToken(user.id);
        await tokens.insert(api);
        const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
        const appToken = newToken(user.id, { kind: 'app', appId: app.id, scopes: [] });
        await apps.insertWithToken(app, appToken);
        const session = randomUUID();
        await sessions.insert({ id: session, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        const before = await changes.latestId();

        await tokens.revoke(api.id, user.id, at(2));
        await tokens.revoke(appToken.id, user.id, at(2));
        await sessions.revoke(session, at(2));
        await apps.delete(app.id, user.id, at(2));
        await keys.rotate({ kid: randomUUID(), alg: 'EdDSA', publicJwk: '{}', privateJwk: '{}', createdAt: at(2), retiredAt: null });
        await users.delete(user.id, at(2));
        expect((await changes.listAfter(before)).map((c) => c.event)).toEqual([
          { type: 'token.revoked', data: { token_id: api.id, token_type: 'api_token', user_id: user.id } },
          { type: 'token.revoked', data: { token_id: appToken.id, token_type: 'app_token', user_id: user.id, app_id: app.id } },
          { type: 'session.revoked', data: { session_id: session, user_id: user.id } },
          { type: 'app.deleted', data: { app_id: app.id, user_id: user.id } },
          { type: 'keys.changed', data: {} },
          { type: 'user.deleted', data: { user_id: user.id } },
        ]);
      });

      it('reads a change recorded without an event, or with one it does not know, as having none', async () => {
        const before = await changes.latestId();
        await database.db.insertInto('changes').values({ kind: 'token', ref: 'old', created_at: at(3), event: null }).execute();
        await database.db.insertInto('changes').values({ kind: 'token', ref: 'odd', created_at: at(3), event: '{"type":"token.stolen","data":{}}' }).execute();
        expect((await changes.listAfter(before)).map((c) => [c.ref, c.event])).toEqual([
          ['old', null],
          ['odd', null],
        ]);
      });

    });

    describe('service credentials', () => {
      const credential = (name: string) => ({ id: randomUUID(), name, hint: 'rzs_abcd', createdAt: at(1), digest: randomUUID() });

      it('finds by digest only, lists the active ones oldest first, never a digest', async () => {
        const first = credential('first');
        const second = { ...credential('second'), createdAt: at(2) };
        await services.insert(second);
        await services.insert(first);
        expect(await services.findByDigest(first.digest)).toEqual({ id: first.id, name: 'first', hint: 'rzs_abcd', createdAt: at(1), revokedAt: null });
        expect(await services.findByDigest('nope')).toBeUndefined();
        const ids: string[] = [first.id, second.id];
        const listed = (await services.listActive()).filter((c) => ids.includes(c.id));
        expect(listed.map((c) => c.name)).toEqual(['first', 'second']);
        expect(JSON.stringify(listed)).not.toContain(first.digest);
      });

      it('refuses a duplicate digest', async () => {
        const one = credential('one');
        await services.insert(one);
        await expect(services.insert({ ...credential('two'), digest: one.digest })).rejects.toSatisfy(isUniqueViolation);
      });

      it('revokes once and records a change that is no event of the stream', async () => {
        const one = credential('revoked');
        await services.insert(one);
        const before = await changes.latestId();
        expect(await services.revoke(one.id, at(3))).toBe(true);
        expect(await services.revoke(one.id, at(4))).toBe(false);
        expect(await services.revoke(randomUUID(), at(4))).toBe(false);
        expect((await services.findByDigest(one.digest))?.revokedAt).toBe(at(3));
        expect((await services.listActive()).map((c) => c.id)).not.toContain(one.id);
        expect((await changes.listAfter(before)).map((c) => [c.kind, c.ref, c.event])).toEqual([['service', one.id, null]]);
      });
    });
  });
}
