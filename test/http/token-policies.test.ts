import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectInvalidToken, expectProblem, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
// User tokens outlive the days these tests move the clock by (re-login would do as well).
const LONG_JWT = { JWT_TTL_SECONDS: '604800' };

/** The events the change log holds for a token, in order. */
async function eventsOf(t: TestApp, id: string): Promise<string[]> {
  const rows = await t.services.database.db.selectFrom('changes').select('event').where('ref', '=', id).orderBy('id').execute();
  return rows.map((r) => (JSON.parse(r.event ?? 'null') as { type: string } | null)?.type ?? 'none');
}

describe('TOKEN_MAX_LIFETIME_DAYS', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { TOKEN_MAX_LIFETIME_DAYS: '30', ...LONG_JWT } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('an expiry is required at creation: 400 naming expires_at', async () => {
    const problem = expectProblem(await json(t, 'POST', '/api/tokens', { name: 'forever' }, user.jwt), 400, 'validation_failed');
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'expires_at' })]);
  });

  it('and capped: one millisecond past the limit is 400, the limit itself is accepted', async () => {
    const over = { name: 'x', expires_at: iso(clock.now() + 30 * DAY + 1) };
    const problem = expectProblem(await json(t, 'POST', '/api/tokens', over, user.jwt), 400, 'validation_failed');
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'expires_at' })]);
    const res = await json(t, 'POST', '/api/tokens', { name: 'x', expires_at: iso(clock.now() + 30 * DAY) }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('app tokens, which carry no expiry of their own, get the longest allowed', async () => {
    const app = await registerApp(t, user.jwt);
    const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, {}, user.jwt)).json();
    const { tokens } = (await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).json();
    expect(tokens.map((x: { expires_at: string }) => x.expires_at)).toEqual([iso(clock.now() + 30 * DAY), iso(clock.now() + 30 * DAY)]);
    expect((await json(t, 'GET', '/api/me', undefined, issued.token)).json().auth.expires_at).toBe(iso(clock.now() + 30 * DAY));
  });

  it('a rotation keeps the lifetime length, within the limit', async () => {
    const short = await createApiToken(t, user.jwt, { expires_at: iso(clock.now() + 7 * DAY) });
    clock.advance(DAY);
    expect((await json(t, 'POST', `/api/tokens/${short.id}/rotate`, {}, user.jwt)).json().expires_at).toBe(iso(clock.now() + 7 * DAY));
  });
});

describe('rotation without the policy, and a rotation of a token without expiry under it', () => {
  it('a token created before the limit was set, without expiry, rotates into one that expires at the limit', async () => {
    const clock = new TestClock();
    const first = await startTestApp({ clock, env: LONG_JWT });
    const user = await signup(first);
    const old = await createApiToken(first, user.jwt);
    await first.app.close();
    await first.services.close();
    const second = await startTestApp({ clock, dir: first.dir, env: { TOKEN_MAX_LIFETIME_DAYS: '10', ...LONG_JWT } });
    try {
      const rotated = await json(second, 'POST', `/api/tokens/${old.id}/rotate`, {}, user.jwt);
      expect(rotated.statusCode, rotated.body).toBe(201);
      expect(rotated.json().expires_at).toBe(iso(clock.now() + 10 * DAY));
    } finally {
      await second.close();
      await first.close().catch(() => {});
    }
  });
});

describe('TOKEN_IDLE_REVOKE_DAYS', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    // A flush interval of an hour: the sweep must write this instance's pending uses itself.
    t = await startTestApp({ clock, env: { TOKEN_IDLE_REVOKE_DAYS: '10', LAST_USED_FLUSH_MS: '3600000', ...LONG_JWT } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('revokes tokens unused that long, since last use or creation, and tells every instance and stream', async () => {
    const unused = await createApiToken(t, user.jwt, { name: 'unused' });
    const used = await createApiToken(t, user.jwt, { name: 'used' });
    const app = await registerApp(t, user.jwt);
    clock.advance(6 * DAY);
    expect((await json(t, 'GET', '/api/me', undefined, used.token)).statusCode).toBe(200);
    expect((await json(t, 'GET', '/api/me', undefined, unused.token)).statusCode).toBe(200);
    // The unused one was just used too: only the app token stays idle from its creation.
    clock.advance(5 * DAY);
    await t.services.maintenance.runOnce();
    expect((await json(t, 'GET', '/api/me', undefined, used.token)).statusCode).toBe(200);
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token));
    expect(await eventsOf(t, app.token_id)).toEqual(['token.revoked']);

    clock.advance(10 * DAY - 1);
    await t.services.maintenance.runOnce();
    expect((await json(t, 'GET', '/api/me', undefined, used.token)).statusCode).toBe(200);
    clock.advance(10 * DAY + 1);
    await t.services.maintenance.runOnce();
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, used.token));
    expect(await eventsOf(t, used.id)).toEqual(['token.revoked']);
  });

  it('a second sweep, or a second instance sweeping, revokes nothing twice', async () => {
    const token = await createApiToken(t, await login(t, user.email));
    clock.advance(11 * DAY);
    await Promise.all([t.services.maintenance.runOnce(), t.services.maintenance.runOnce()]);
    await t.services.maintenance.runOnce();
    expect(await eventsOf(t, token.id)).toEqual(['token.revoked']);
  });
});

describe('a rotation grace ends', () => {
  it('by time on every request, then the sweep records token.revoked once', async () => {
    const clock = new TestClock();
    const t = await startTestApp({ clock });
    try {
      const user = await signup(t);
      const old = await createApiToken(t, user.jwt);
      const rotated = await json(t, 'POST', `/api/tokens/${old.id}/rotate`, { grace_seconds: 60 }, user.jwt);
      expect(rotated.statusCode, rotated.body).toBe(201);
      // At rotation: token.updated, so a verifier drops its cached answer and learns the new `exp`.
      expect(await eventsOf(t, old.id)).toEqual(['token.updated']);
      await t.services.maintenance.runOnce();
      expect(await eventsOf(t, old.id)).toEqual(['token.updated']);
      clock.advance(60_000);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, old.token));
      await t.services.maintenance.runOnce();
      await t.services.maintenance.runOnce();
      expect(await eventsOf(t, old.id)).toEqual(['token.updated', 'token.revoked']);
      expect((await json(t, 'GET', '/api/me', undefined, rotated.json().token)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
