import { randomBytes, randomUUID } from 'node:crypto';
import { derivationKey, parentRef } from '@rz-auth/token';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { parseSealingKey, UnsealError } from '../../src/lib/sealed.js';
import { checkDerivationKeys } from '../../src/tokens/derived/key-check.js';
import { DerivationKeys } from '../../src/tokens/derived/keys.js';
import { DerivedStore } from '../../src/tokens/derived/store.js';
import { at, insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

const kek = () => parseSealingKey(randomBytes(32).toString('base64'), 'DERIVE_KEK');

/** Derived tokens' tables on every database (migration 0019, contract §14.3, §14.6). */
export function derivedStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`derived token store contract: ${name}`, () => {
    const s = useStores(harness);
    let store: DerivedStore;
    beforeAll(() => {
      store = new DerivedStore(s.database.db);
    });

    it('finds a derivable parent by its reference, keeps its key sealed, and rewraps it under a new KEK', async () => {
      const old = kek();
      const current = kek();
      const user = await insertUser(s.users);
      const record = newToken(user.id);
      await s.tokens.insert(record);
      const value = generateToken('api');
      const derivation = new DerivationKeys({ current: old, old: null }).arm(record.id, value);
      await store.setDerivation(s.database.db, record.id, derivation);

      const found = await store.parent(parentRef(value));
      expect(found).toMatchObject({ token: { id: record.id }, derivable: true, revoked: false, owner: { id: user.id } });
      const stored = found?.sealedKey ?? '';
      const dk = Buffer.from(derivationKey(value)).toString('base64url');
      expect(stored).toMatch(/^sealed:v1:/);
      expect(stored).not.toContain(dk);

      // The old key alone no longer starts: rotation keeps it as DERIVE_KEK_OLD.
      await expect(checkDerivationKeys(s.database.db, new DerivationKeys({ current, old: null }))).rejects.toBeInstanceOf(UnsealError);
      await expect(checkDerivationKeys(s.database.db, new DerivationKeys({ current: null, old: null }))).rejects.toThrow(/DERIVE_KEK is not set/);
      const rotating = new DerivationKeys({ current, old });
      expect(rotating.stale(stored)).toBe(true);
      const opened = rotating.open(record.id, stored);
      expect(Buffer.from(opened)).toEqual(Buffer.from(derivationKey(value)));
      await store.rewrap(record.id, stored, rotating.reseal(record.id, opened));
      expect(await checkDerivationKeys(s.database.db, new DerivationKeys({ current, old: null }))).toBeGreaterThanOrEqual(1);
      // A wrapped key moved to another row does not open there.
      expect(() => rotating.open(randomUUID(), stored)).toThrow(UnsealError);

      await store.setDerivation(s.database.db, record.id, null);
      expect(await store.parent(parentRef(value))).toMatchObject({ derivable: false, sealedKey: null });
      expect(await checkDerivationKeys(s.database.db, new DerivationKeys({ current: null, old: null }))).toBe(0);
    });

    it('keeps revoked child ids until their keep time, once each', async () => {
      const user = await insertUser(s.users);
      const record = newToken(user.id);
      await s.tokens.insert(record);
      const child = randomUUID();
      expect(await store.childRevoked(record.id, child)).toBe(false);
      await store.revokeChild(record.id, child, at(1), at(30));
      await store.revokeChild(record.id, child, at(2), at(40));
      expect(await store.childRevoked(record.id, child)).toBe(true);
      expect(await store.childRevoked(record.id, randomUUID())).toBe(false);
      expect(await store.dropEndedRevocations(at(29))).toBe(0);
      expect(await store.dropEndedRevocations(at(30))).toBeGreaterThanOrEqual(1);
      expect(await store.childRevoked(record.id, child)).toBe(false);
    });

    it('writes one seen row per child token and only moves its last use forward', async () => {
      const user = await insertUser(s.users);
      const record = newToken(user.id);
      await s.tokens.insert(record);
      const childId = randomUUID();
      const use = (n: number, address: string | null) => ({ tokenId: record.id, childId, labels: ['ci run 1'], caveats: { exp: 10 }, at: at(n), address });
      await Promise.all([store.recordSeen(new Map([['d1', use(5, '10.0.0.1')]])), store.recordSeen(new Map([['d2', use(6, null)]]))]);
      await store.recordSeen(new Map([['d1', use(9, '10.0.0.2')]]));
      await store.recordSeen(new Map([['d1', use(7, '10.0.0.3')]]));
      // A parent deleted meanwhile adds nothing.
      await store.recordSeen(new Map([['d3', { ...use(9, null), tokenId: randomUUID() }]]));
      const rows = await s.database.db.selectFrom('derived_seen').selectAll().where('token_id', '=', record.id).orderBy('digest').execute();
      expect(rows.map((r) => [r.digest, r.first_seen_at, r.last_used_at, r.last_used_ip, JSON.parse(r.labels)])).toEqual([
        ['d1', at(5), at(9), '10.0.0.2', ['ci run 1']],
        ['d2', at(6), at(6), null, ['ci run 1']],
      ]);
      expect(await store.seenCounts([record.id])).toEqual(new Map([[record.id, 1]]));
    });
  });
}
