import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePosition, keysetPage, type PageRequest } from '../../src/lib/pages.js';
import { at, insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

/**
 * What lists and caps need of every store: keyset pages that writes between two pages do not
 * shift, and caps that creations at once cannot pass. SQLite always, PostgreSQL where reachable.
 */
export function listStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`list store contract: ${name}`, () => {
    const s = useStores(harness);
    const active = { state: 'active', now: at(50), endedSince: at(0) } as const;

    it('pages newest first by (created_at, id), ties broken by id; a token inserted or revoked between pages moves no other', async () => {
      const user = await insertUser(s.users);
      // Three share one creation time: the id decides their order.
      const tokens = [1, 2, 2, 2, 3, 4].map((n) => newToken(user.id, { createdAt: at(n) }));
      for (const token of tokens) await s.tokens.insert(token);
      const all = (await s.tokens.list({ ...active, owner: { userId: user.id } })).map((t) => t.id);
      expect(all).toHaveLength(6);
      const read = async (page: PageRequest) => keysetPage(await s.tokens.list({ ...active, owner: { userId: user.id }, page }), page);
      const first = await read({ limit: 2 });
      expect(first.items.map((t) => t.id)).toEqual(all.slice(0, 2));
      await s.tokens.insert(newToken(user.id, { createdAt: at(2) }));
      await s.tokens.revoke(all[3] ?? '', user.id, at(10));
      const seen = [...first.items.map((t) => t.id)];
      let cursor = first.nextCursor;
      while (cursor !== null) {
        const page = await read({ limit: 2, after: decodePosition(cursor) });
        seen.push(...page.items.map((t) => t.id));
        cursor = page.nextCursor;
      }
      const kept = all.filter((id) => id !== all[3]);
      // Every token listed before, not revoked, exactly once, in order; the one inserted at a tied time may appear too.
      expect(seen.filter((id) => all.includes(id))).toEqual(kept);
      expect(new Set(seen).size).toBe(seen.length);
    });

    it('a cap holds against insertions at once: API tokens, apps, an app\'s tokens', async () => {
      const user = await insertUser(s.users);
      const results = await Promise.all(Array.from({ length: 8 }, () => s.tokens.insert(newToken(user.id, { createdAt: at(1) }), undefined, 3)));
      expect(results.filter(Boolean)).toHaveLength(3);

      const owner = await insertUser(s.users);
      const apps = await Promise.all(
        Array.from({ length: 6 }, () => {
          const app = { id: randomUUID(), userId: owner.id, name: 'a', description: '', createdAt: at(1) };
          return s.apps.insertWithToken(app, newToken(owner.id, { kind: 'app', appId: app.id }), [], 2);
        }),
      );
      expect(apps.filter(Boolean)).toHaveLength(2);

      const app = { id: randomUUID(), userId: owner.id, name: 'b', description: '', createdAt: at(1) };
      await s.apps.insertWithToken(app, newToken(owner.id, { kind: 'app', appId: app.id }));
      const issued = await Promise.all(Array.from({ length: 6 }, () => s.apps.insertToken(newToken(owner.id, { kind: 'app', appId: app.id, createdAt: at(1) }), undefined, 3)));
      expect(issued.filter((r) => r === true)).toHaveLength(2);
      expect(issued.filter((r) => r === 'full')).toHaveLength(4);
    });
  });
}
