import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectInvalidToken, expectProblem, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';

const DAY = 86_400_000;

type Listed = { id: string; state: string; revoked_at: string | null; expires_at: string | null };

/** Expired and revoked tokens stay visible to their owner for a while, filtered by `state`. */
describe('token states', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { AUDIT_RETENTION_DAYS: '30' } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  const list = async (url: string): Promise<Listed[]> => {
    const res = await json(t, 'GET', url, undefined, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().tokens as Listed[];
  };
  const ids = (items: Listed[]) => items.map((i) => i.id);

  it('a revoked token leaves the default list, is listed under state=revoked and answers GET with its state; it stays 401, 404 to DELETE, PATCH and rotate', async () => {
    const token = await createApiToken(t, user.jwt, { name: 'revoke me' });
    clock.advance(1000);
    expect((await json(t, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const revokedAt = new Date(clock.now()).toISOString();
    expect(ids(await list('/api/tokens'))).not.toContain(token.id);
    expect(ids(await list('/api/tokens?state=active'))).not.toContain(token.id);
    const [listed] = (await list('/api/tokens?state=revoked')).filter((i) => i.id === token.id);
    expect(listed).toMatchObject({ state: 'revoked', revoked_at: revokedAt });
    expect(ids(await list('/api/tokens?state=expired'))).not.toContain(token.id);
    const detail = await json(t, 'GET', `/api/tokens/${token.id}`, undefined, user.jwt);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toMatchObject({ id: token.id, name: 'revoke me', state: 'revoked', revoked_at: revokedAt });
    expect(detail.body).not.toContain(token.token);
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token.token));
    expectProblem(await json(t, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt), 404, 'not_found');
    expectProblem(await json(t, 'PATCH', `/api/tokens/${token.id}`, { name: 'again' }, user.jwt), 404, 'not_found');
    expectProblem(await json(t, 'POST', `/api/tokens/${token.id}/rotate`, {}, user.jwt), 404, 'not_found');
  });

  it('an expired token is listed under state=expired with its expires_at, and answers GET with state expired', async () => {
    const expiresAt = new Date(clock.now() + 60_000).toISOString();
    const token = await createApiToken(t, user.jwt, { name: 'short', expires_at: expiresAt });
    expect(ids(await list('/api/tokens'))).toContain(token.id);
    clock.advance(60_000);
    expect(ids(await list('/api/tokens'))).not.toContain(token.id);
    const [listed] = (await list('/api/tokens?state=expired')).filter((i) => i.id === token.id);
    expect(listed).toMatchObject({ state: 'expired', expires_at: expiresAt, revoked_at: null });
    expect((await json(t, 'GET', `/api/tokens/${token.id}`, undefined, user.jwt)).json()).toMatchObject({ state: 'expired', expires_at: expiresAt, revoked_at: null });
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token.token));
    // Once the expiry sweep marks it revoked, it is still shown as expired.
    await t.services.maintenance.runOnce();
    expect((await json(t, 'GET', `/api/tokens/${token.id}`, undefined, user.jwt)).json()).toMatchObject({ state: 'expired', revoked_at: null });
    expect(ids(await list('/api/tokens?state=revoked'))).not.toContain(token.id);
  });

  it("an app's tokens take the same filter", async () => {
    const app = await registerApp(t, user.jwt);
    expect((await json(t, 'DELETE', `/api/tokens/${app.token_id}`, undefined, user.jwt)).statusCode).toBe(204);
    expect(await list(`/api/apps/${app.id}/tokens`)).toEqual([]);
    expect(await list(`/api/apps/${app.id}/tokens?state=revoked`)).toEqual([expect.objectContaining({ id: app.token_id, state: 'revoked' })]);
  });

  it.each(['/api/tokens', '/api/apps/00000000-0000-4000-8000-000000000000/tokens'])('400 naming state for an unknown state on %s', async (url) => {
    const problem = expectProblem(await json(t, 'GET', `${url}?state=deleted`, undefined, user.jwt), 400, 'validation_failed');
    expect(problem.errors).toEqual([expect.objectContaining({ field: expect.stringMatching(/^(querystring\/)?state$/) })]);
  });

  it('an ended token stays visible as long as the audit log keeps its end (AUDIT_RETENTION_DAYS), then is 404', async () => {
    const token = await createApiToken(t, user.jwt);
    expect((await json(t, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    clock.advance(29 * DAY);
    user = { ...user, jwt: await login(t, user.email) };
    expect(ids(await list('/api/tokens?state=revoked'))).toContain(token.id);
    clock.advance(2 * DAY);
    user = { ...user, jwt: await login(t, user.email) };
    expect(ids(await list('/api/tokens?state=revoked'))).not.toContain(token.id);
    expectProblem(await json(t, 'GET', `/api/tokens/${token.id}`, undefined, user.jwt), 404, 'not_found');
  });
});
