import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditEvent, SYSTEM_CONTEXT } from '../../src/audit/events.js';
import { deviceCodeDigest, newDeviceCode, newUserCode } from '../../src/oauth/codes.js';
import { DeviceRequestStore, MAX_LOOKUPS } from '../../src/oauth/device-store.js';
import { insertUser, newToken, type StoreHarness, useStores } from './fixture.js';

const NOW = '2026-12-01T10:00:00.000Z';
const LATER = '2026-12-01T10:15:00.000Z';
const event = () => auditEvent({ type: 'device.requested', userId: null, subject: null }, SYSTEM_CONTEXT, Date.parse(NOW));

const row = (overrides: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  device_code_digest: deviceCodeDigest(newDeviceCode()),
  user_code: newUserCode(),
  client_id: 'rz-cli',
  scopes: '[]',
  device_name: null,
  request_ip: '203.0.113.5',
  user_agent: null,
  created_at: NOW,
  expires_at: LATER,
  state: 'pending' as const,
  interval_s: 5,
  last_poll_at: null,
  approver_id: null,
  approved_scopes: null,
  approved_days: null,
  approved_name: null,
  token_id: null,
  ...overrides,
});

/** Device authorization requests on every database (contract §13.5, §13.6): codes unique among pending ones, single transitions, single redemption. */
export function deviceStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`device request store contract: ${name}`, () => {
    const s = useStores(harness);
    const store = () => new DeviceRequestStore(s.database.db);

    it('a user code is unique among pending requests, and free again once the request is decided', async () => {
      const first = row();
      expect(await store().create(first, 100, NOW, event())).toBe(true);
      await expect(store().create(row({ user_code: first.user_code }), 100, NOW, event())).rejects.toThrow();
      const user = await insertUser(s.users);
      expect(await store().decide(first.id, null, NOW, auditEvent({ type: 'device.denied', userId: user.id, subject: null }, SYSTEM_CONTEXT, Date.parse(NOW)))).toBe(true);
      expect(await store().create(row({ user_code: first.user_code }), 100, NOW, event())).toBe(true);
    });

    it('at most maxPending unexpired pending requests per address', async () => {
      const ip = '198.51.100.77';
      for (let i = 0; i < 3; i++) expect(await store().create(row({ request_ip: ip }), 3, NOW, event())).toBe(true);
      expect(await store().create(row({ request_ip: ip }), 3, NOW, event())).toBe(false);
    });

    it(`a code is served by ${MAX_LOOKUPS} lookups`, async () => {
      const r = row();
      await store().create(r, 100, NOW, event());
      for (let i = 0; i < MAX_LOOKUPS; i++) expect(await store().lookUp(r.user_code, NOW)).toBeDefined();
      expect(await store().lookUp(r.user_code, NOW)).toBeUndefined();
    });

    it('approve and deny at once: exactly one transition wins', async () => {
      const r = row();
      await store().create(r, 100, NOW, event());
      const user = await insertUser(s.users);
      const decided = (type: 'device.approved' | 'device.denied') => auditEvent({ type, userId: user.id, subject: null }, SYSTEM_CONTEXT, Date.parse(NOW));
      const results = await Promise.all([
        store().decide(r.id, { approverId: user.id, scopes: [], days: 30, name: null }, NOW, decided('device.approved')),
        store().decide(r.id, null, NOW, decided('device.denied')),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('20 redemptions at once: exactly one stores its token', async () => {
      const r = row();
      await store().create(r, 100, NOW, event());
      const user = await insertUser(s.users);
      await store().decide(r.id, { approverId: user.id, scopes: [], days: 30, name: null }, NOW, auditEvent({ type: 'device.approved', userId: user.id, subject: null }, SYSTEM_CONTEXT, Date.parse(NOW)));
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => {
          const token = newToken(user.id);
          return store().redeem(r.id, token, auditEvent({ type: 'token.created', userId: user.id, subject: { type: 'token', id: token.id } }, SYSTEM_CONTEXT, Date.parse(NOW)), 100);
        }),
      );
      expect(outcomes.filter((o) => o === 'redeemed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'gone')).toHaveLength(19);
      const { count } = await s.database.db.selectFrom('tokens').select((eb) => eb.fn.countAll<number | string>().as('count')).where('user_id', '=', user.id).executeTakeFirstOrThrow();
      expect(Number(count)).toBe(1);
    });

    it('prune deletes the expired rows, in batches, and nothing else', async () => {
      const keep = row({ expires_at: '2999-01-01T00:00:00.000Z' });
      await store().create(keep, 100, NOW, event());
      for (let i = 0; i < 7; i++) await store().create(row({ expires_at: NOW, request_ip: `192.0.2.${i}` }), 100, NOW, event());
      await store().prune(LATER, 3);
      const left = await s.database.db.selectFrom('device_requests').select('id').where('expires_at', '<', LATER).execute();
      expect(left).toEqual([]);
      expect(await store().findByDigest(keep.device_code_digest)).toBeDefined();
    });
  });
}
