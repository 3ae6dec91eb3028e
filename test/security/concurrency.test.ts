import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createApiToken, expectInvalidToken, expectProblem, json, login, PASSWORD, registerApp, signup, type TestUser } from '../helpers/api.js';

/**
 * Family 8 of the security bar, in process: many requests in flight at once through one app. The
 * invariants: exactly one winner where one is allowed, no 5xx, and once a revocation has answered
 * 204, no later request is ever let in (not even from a cache filled by a request that overlapped).
 */

const counts = (statuses: readonly number[]): Record<number, number> => {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
};

describe('concurrency', () => {
  let t: TestApp;
  let owner: TestUser;
  const me = (token: string) => json(t, 'GET', '/api/me', undefined, token);

  beforeAll(async () => {
    // Rounds issue 30 tokens to one app at once: above the shipped cap per app (docs/lists.md).
    t = await startTestApp({ env: { MAX_TOKENS_PER_APP: '100' } });
    owner = await signup(t);
  });
  afterAll(() => t.close());

  it('20 parallel revocations of one token: exactly one 204, the rest 404, and the token is dead', async () => {
    const { id, token } = await createApiToken(t, owner.jwt);
    expect((await me(token)).statusCode).toBe(200);
    const results = await Promise.all(Array.from({ length: 20 }, () => json(t, 'DELETE', `/api/tokens/${id}`, undefined, owner.jwt)));
    expect(counts(results.map((r) => r.statusCode))).toEqual({ 204: 1, 404: 19 });
    for (const res of results.filter((r) => r.statusCode === 404)) expectProblem(res, 404, 'not_found');
    expectInvalidToken(await me(token));
  });

  it('50 parallel token creations: all 201, distinct ids and values, all usable and listed', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => json(t, 'POST', '/api/tokens', { name: `parallel ${i}` }, owner.jwt)));
    expect(counts(results.map((r) => r.statusCode))).toEqual({ 201: 50 });
    const created = results.map((r) => r.json() as { id: string; token: string });
    expect(new Set(created.map((c) => c.id)).size).toBe(50);
    expect(new Set(created.map((c) => c.token)).size).toBe(50);
    const uses = await Promise.all(created.map((c) => me(c.token)));
    expect(counts(uses.map((r) => r.statusCode))).toEqual({ 200: 50 });
    const listed = (await json(t, 'GET', '/api/tokens', undefined, owner.jwt)).json() as { tokens: Array<{ id: string }> };
    expect(listed.tokens.map((x) => x.id)).toEqual(expect.arrayContaining(created.map((c) => c.id)));
  });

  it.each([
    ['cold cache (never used before)', false],
    ['warm cache (used just before)', true],
  ])('revocation racing use, %s: after the 204, every request is 401', async (_name, warm) => {
    for (let round = 0; round < 15; round++) {
      const { id, token } = await createApiToken(t, owner.jwt);
      if (warm) expect((await me(token)).statusCode).toBe(200);
      const racing = Array.from({ length: 20 }, () => me(token));
      const revoke = json(t, 'DELETE', `/api/tokens/${id}`, undefined, owner.jwt);
      racing.push(...Array.from({ length: 20 }, () => me(token)));
      expect((await revoke).statusCode).toBe(204);
      const after = await Promise.all(Array.from({ length: 10 }, () => me(token)));
      for (const res of after) expectInvalidToken(res);
      // Requests that overlapped the revocation may go either way, but never fail otherwise.
      for (const res of await Promise.all(racing)) expect([200, 401]).toContain(res.statusCode);
      expectInvalidToken(await me(token));
    }
  });

  it('logout racing use of the same JWT: after the 204, every request is 401', async () => {
    for (let round = 0; round < 10; round++) {
      const jwt = await login(t, owner.email);
      const racing = Array.from({ length: 20 }, () => me(jwt));
      const logout = json(t, 'POST', '/api/auth/logout', undefined, jwt);
      racing.push(...Array.from({ length: 20 }, () => me(jwt)));
      expect((await logout).statusCode).toBe(204);
      for (const res of await Promise.all(Array.from({ length: 10 }, () => me(jwt)))) expectInvalidToken(res);
      for (const res of await Promise.all(racing)) expect([200, 401]).toContain(res.statusCode);
    }
  });

  it.each([
    ['the same email', (i: number) => ({ email: 'twin@example.com', username: `twin_${i}` })],
    ['the same email in different cases', (i: number) => ({ email: i % 2 ? 'TWIN2@example.com' : 'twin2@EXAMPLE.com', username: `twin2_${i}` })],
    ['the same username in different cases', (i: number) => ({ email: `solo-${i}@example.com`, username: i % 2 ? 'SameName' : 'samename' })],
  ])('8 parallel signups with %s: exactly one 201, the rest 409 conflict', async (_name, body) => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => json(t, 'POST', '/api/auth/signup', { ...body(i), password: PASSWORD })),
    );
    expect(counts(results.map((r) => r.statusCode))).toEqual({ 201: 1, 409: 7 });
    for (const res of results.filter((r) => r.statusCode === 409)) expectProblem(res, 409, 'conflict');
    const winner = results.find((r) => r.statusCode === 201)?.json() as { token: string };
    expect((await me(winner.token)).statusCode).toBe(200);
  });

  it('deleting an app while issuing tokens for it: no 5xx, and afterwards none of its tokens work', async () => {
    for (let round = 0; round < 5; round++) {
      const app = await registerApp(t, owner.jwt);
      expect((await me(app.token)).statusCode, 'cached as valid before the delete').toBe(200);
      const issue = () => json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, owner.jwt);
      const before = Array.from({ length: 15 }, issue);
      const del = json(t, 'DELETE', `/api/apps/${app.id}`, undefined, owner.jwt);
      const after = Array.from({ length: 15 }, issue);
      const issued = await Promise.all([...before, ...after]);
      expect((await del).statusCode).toBe(204);
      expect(issued.every((r) => r.statusCode === 201 || r.statusCode === 404), JSON.stringify(counts(issued.map((r) => r.statusCode)))).toBe(true);
      const tokens = [app.token, ...issued.filter((r) => r.statusCode === 201).map((r) => (r.json() as { token: string }).token)];
      for (const res of await Promise.all(tokens.map(me))) expectInvalidToken(res);
      expectProblem(await json(t, 'GET', `/api/apps/${app.id}`, undefined, owner.jwt), 404, 'not_found');
    }
  });

  it('deleting an account while it creates tokens and apps answered some of them 503: each is 201 or 401, and nothing of it works after', async () => {
    for (let round = 0; round < 5; round++) {
      const user = await signup(t);
      const writer = await createApiToken(t, user.jwt, { scopes: ['apps:write'] });
      const create = (i: number) =>
        i % 2 === 0 ? json(t, 'POST', '/api/tokens', { name: `racing ${i}` }, user.jwt) : json(t, 'POST', '/api/apps', { name: `racing ${i}` }, writer.token);
      // Creations keep arriving for as long as the deletion (a password hash, then its transaction) runs.
      let deleted = false;
      const del = json(t, 'DELETE', '/api/me', { password: PASSWORD }, user.jwt).finally(() => (deleted = true));
      const made = [];
      for (let i = 0; !deleted || i < 8; i += 4) made.push(...(await Promise.all([create(i), create(i + 1), create(i + 2), create(i + 3)])));
      expect((await del).statusCode).toBe(204);
      expect(made.every((r) => r.statusCode === 201 || r.statusCode === 401), JSON.stringify(counts(made.map((r) => r.statusCode)))).toBe(true);
      for (const refused of made.filter((r) => r.statusCode === 401)) expectInvalidToken(refused);
      const tokens = [user.jwt, writer.token, ...made.filter((r) => r.statusCode === 201).map((r) => (r.json() as { token: string }).token)];
      for (const res of await Promise.all(tokens.map(me))) expectInvalidToken(res);
    }
  });
});
