import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeStore } from '../../src/changes/store.js';
import { Maintenance } from '../../src/maintenance/runner.js';
import { SESSION_GRACE_MS } from '../../src/maintenance/sweeps.js';
import { SessionStore } from '../../src/account/session-store.js';
import { createApiToken, json, login, signup } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';

describe('Maintenance', () => {
  it('runs every sweep as of the clock; one that fails is reported and the others still run', async () => {
    const clock = new TestClock();
    const calls: string[] = [];
    const errors: string[] = [];
    const maintenance = new Maintenance(
      [
        { name: 'first', run: async (now) => calls.push(`first ${now}`) },
        { name: 'broken', run: () => Promise.reject(new Error('no table')) },
        { name: 'last', run: async (now) => calls.push(`last ${now}`) },
      ],
      clock,
      60_000,
      (_error, context) => errors.push(context),
    );
    await maintenance.runOnce();
    expect(calls).toEqual([`first ${clock.now()}`, `last ${clock.now()}`]);
    expect(errors).toEqual(['maintenance: broken']);
  });
});

describe('maintenance sweeps of the running service', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('expired sessions were never deleted: they are, once expired longer than the grace period', async () => {
    const clock = new TestClock();
    const app = await startTestApp({ clock });
    t = app;
    const sessions = new SessionStore(app.services.database.db);
    const sid = decodeJwt((await signup(app)).jwt).sid as string;
    const lifetime = app.config.jwt.ttlSeconds * 1000;

    clock.advance(lifetime + SESSION_GRACE_MS - 1000);
    const later = decodeJwt((await signup(app)).jwt).sid as string;
    await app.services.maintenance.runOnce();
    expect(await sessions.findById(sid)).toBeDefined();

    clock.advance(2000);
    await app.services.maintenance.runOnce();
    expect(await sessions.findById(sid)).toBeUndefined();
    expect(await sessions.findById(later)).toBeDefined();
  });

  it('old change-log entries were never deleted: they are, after the retention window, the newest always kept', async () => {
    const clock = new TestClock();
    const app = await startTestApp({ clock });
    t = app;
    const changes = new ChangeStore(app.services.database.db);
    const user = await signup(app);
    const revoke = async () => {
      const jwt = await login(app, user.email);
      const { id } = await createApiToken(app, jwt);
      expect((await json(app, 'DELETE', `/api/tokens/${id}`, undefined, jwt)).statusCode).toBe(204);
      return changes.latestId();
    };
    const old = await revoke();
    const retention = app.config.changes.retentionMs;

    clock.advance(retention - 1000);
    const recent = await revoke();
    await app.services.maintenance.runOnce();
    expect((await changes.bounds()).oldest).toBeLessThanOrEqual(old);

    clock.advance(2000);
    await app.services.maintenance.runOnce();
    expect(await changes.bounds()).toEqual({ oldest: recent, latest: recent });

    // Long after, nothing new: the newest entry stays, so an instance can always tell what it missed.
    clock.advance(10 * retention);
    await app.services.maintenance.runOnce();
    expect(await changes.bounds()).toEqual({ oldest: recent, latest: recent });
    expect(app.services.feed.cursor).toBe(recent);
  });

  it('audit events are deleted once older than AUDIT_RETENTION_DAYS, and not before', async () => {
    const clock = new TestClock();
    const app = await startTestApp({ clock, env: { AUDIT_RETENTION_DAYS: '30' } });
    t = app;
    const user = await signup(app);
    const days = 86_400_000;
    clock.advance(30 * days - 1000);
    await createApiToken(app, await login(app, user.email));
    const types = async () => (await app.services.audit.list({ userId: user.id, limit: 10 })).map((e) => e.type);
    await app.services.maintenance.runOnce();
    expect(await types()).toEqual(['token.created', 'login.succeeded', 'user.signed_up']);

    clock.advance(2000);
    await app.services.maintenance.runOnce();
    expect(await types()).toEqual(['token.created', 'login.succeeded']);

    clock.advance(30 * days);
    await app.services.maintenance.runOnce();
    expect(await types()).toEqual([]);
  });
});
