import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../src/db/dialect.js';
import { at, insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

/**
 * What the platform's services rely on in every store (contract §7): the event recorded with each
 * change, and the service credentials. Run on SQLite always and on PostgreSQL where it is reachable.
 */
export function platformStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`platform store contract: ${name}`, () => {
    const stores = useStores(harness);
    const newUser = () => insertUser(stores.users);

    describe('change events', () => {
      it('records with each change what it means to the platform\'s services, in the same transaction', async () => {
        const user = await newUser();
        const api = newToken(user.id);
        await stores.tokens.insert(api);
        const app = { id: randomUUID(), userId: user.id, name: 'a', description: '', createdAt: at(1) };
        const appToken = newToken(user.id, { kind: 'app', appId: app.id, scopes: [] });
        await stores.apps.insertWithToken(app, appToken);
        const session = randomUUID();
        await stores.sessions.insert({ id: session, userId: user.id, createdAt: at(1), expiresAt: at(50) });
        const before = await stores.changes.latestId();

        await stores.tokens.revoke(api.id, user.id, at(2));
        await stores.tokens.revoke(appToken.id, user.id, at(2));
        await stores.sessions.revoke(session, at(2));
        await stores.apps.delete(app.id, user.id, at(2));
        await stores.keys.rotate({ kid: randomUUID(), alg: 'EdDSA', publicJwk: '{}', privateJwk: '{}', createdAt: at(2), retiredAt: null });
        await stores.users.delete(user.id, at(2));
        expect((await stores.changes.listAfter(before)).map((c) => c.event)).toEqual([
          { type: 'token.revoked', data: { token_id: api.id, token_type: 'api_token', user_id: user.id } },
          { type: 'token.revoked', data: { token_id: appToken.id, token_type: 'app_token', user_id: user.id, app_id: app.id } },
          { type: 'session.revoked', data: { session_id: session, user_id: user.id } },
          { type: 'app.deleted', data: { app_id: app.id, user_id: user.id } },
          { type: 'keys.changed', data: {} },
          { type: 'user.deleted', data: { user_id: user.id } },
        ]);
      });

      it('reads a change recorded without an event, or with one it does not know, as having none', async () => {
        const before = await stores.changes.latestId();
        await stores.database.db.insertInto('changes').values({ kind: 'token', ref: 'old', created_at: at(3), event: null }).execute();
        await stores.database.db.insertInto('changes').values({ kind: 'token', ref: 'odd', created_at: at(3), event: '{"type":"token.stolen","data":{}}' }).execute();
        expect((await stores.changes.listAfter(before)).map((c) => [c.ref, c.event])).toEqual([
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
        await stores.services.insert(second);
        await stores.services.insert(first);
        expect(await stores.services.findByDigest(first.digest)).toEqual({ id: first.id, name: 'first', hint: 'rzs_abcd', createdAt: at(1), revokedAt: null });
        expect(await stores.services.findByDigest('nope')).toBeUndefined();
        const ids: string[] = [first.id, second.id];
        const listed = (await stores.services.listActive()).filter((c) => ids.includes(c.id));
        expect(listed.map((c) => c.name)).toEqual(['first', 'second']);
        expect(JSON.stringify(listed)).not.toContain(first.digest);
      });

      it('refuses a duplicate digest', async () => {
        const one = credential('one');
        await stores.services.insert(one);
        await expect(stores.services.insert({ ...credential('two'), digest: one.digest })).rejects.toSatisfy(isUniqueViolation);
      });

      it('revokes once and records a change that is no event of the stream', async () => {
        const one = credential('revoked');
        await stores.services.insert(one);
        const before = await stores.changes.latestId();
        expect(await stores.services.revoke(one.id, at(3))).toBe(true);
        expect(await stores.services.revoke(one.id, at(4))).toBe(false);
        expect(await stores.services.revoke(randomUUID(), at(4))).toBe(false);
        expect((await stores.services.findByDigest(one.digest))?.revokedAt).toBe(at(3));
        expect((await stores.services.listActive()).map((c) => c.id)).not.toContain(one.id);
        expect((await stores.changes.listAfter(before)).map((c) => [c.kind, c.ref, c.event])).toEqual([['service', one.id, null]]);
      });
    });
  });
}
