import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectInvalidToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

const APP_TOKEN = /^rza_[0-9A-Za-z]{49}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('apps', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());

  describe('POST /api/apps', () => {
    it('201 with the record and its first app token; no-store', async () => {
      const res = await json(t, 'POST', '/api/apps', { name: ' Space Game ', description: 'Pew pew.\nLine two.' }, user.jwt);
      expect(res.statusCode).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Space Game',
        description: 'Pew pew.\nLine two.',
        created_at: expect.any(String),
        token: expect.stringMatching(APP_TOKEN),
        token_id: expect.stringMatching(UUID),
        scopes: [],
        expires_at: null,
        allowed_cidrs: null,
      });
    });

    it('description is optional and defaults to empty', async () => {
      const res = await json(t, 'POST', '/api/apps', { name: 'No description' }, user.jwt);
      expect(res.statusCode).toBe(201);
      expect(res.json().description).toBe('');
    });

    it.each([
      ['a missing name', { description: 'x' }, 'name'],
      ['a blank name', { name: ' \t ' }, 'name'],
      ['a name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
      ['a description over 1000 characters', { name: 'x', description: 'd'.repeat(1001) }, 'description'],
      ['a description with a NUL', { name: 'x', description: 'a\u0000b' }, 'description'],
      ['a smuggled token field', { name: 'x', token: 'rza_x' }, 'token'],
      ['a smuggled user_id', { name: 'x', user_id: user?.id ?? 'x' }, 'user_id'],
      ['a number for name', { name: 42 }, 'name'],
    ])('400 for %s', async (_name, body, field) => {
      const problem = expectProblem(await json(t, 'POST', '/api/apps', body, user.jwt), 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });
  });

  describe('GET /api/apps and /api/apps/{id}', () => {
    it('lists own apps newest first and never a token value', async () => {
      const owner = await signup(t);
      const first = await registerApp(t, owner.jwt, { name: 'first' });
      const second = await registerApp(t, owner.jwt, { name: 'second' });
      const res = await json(t, 'GET', '/api/apps', undefined, owner.jwt);
      expect(res.statusCode).toBe(200);
      const { apps } = res.json();
      expect(apps.map((a: { name: string }) => a.name)).toEqual(['second', 'first']);
      expect(apps[0]).toEqual({ id: second.id, name: 'second', description: 'for tests', created_at: expect.any(String) });
      expect(res.body).not.toContain(first.token);
      expect(res.body).not.toContain('rza_');
    });

    it('reads one app, never its token', async () => {
      const app = await registerApp(t, user.jwt, { name: 'single' });
      const res = await json(t, 'GET', `/api/apps/${app.id}`, undefined, user.jwt);
      expect(res.json()).toEqual({ id: app.id, name: 'single', description: 'for tests', created_at: expect.any(String) });
      expect(res.body).not.toContain('rza_');
    });

    it.each(['nope', '00000000-0000-4000-8000-000000000000', '../tokens'])('404 for the id %s', async (id) => {
      expectProblem(await json(t, 'GET', `/api/apps/${encodeURIComponent(id)}`, undefined, user.jwt), 404, 'not_found');
    });
  });

  describe('POST /api/apps/{id}/tokens', () => {
    it('issues an additional token; both work until revoked (rotation)', async () => {
      const app = await registerApp(t, user.jwt);
      const res = await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt);
      expect(res.statusCode).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const issued = res.json();
      expect(issued).toEqual({
        token: expect.stringMatching(APP_TOKEN),
        token_id: expect.stringMatching(UUID),
        created_at: expect.any(String),
        scopes: [],
        expires_at: null,
        allowed_cidrs: null,
      });
      for (const token of [app.token, issued.token]) {
        const me = await json(t, 'GET', '/api/me', undefined, token);
        expect(me.json().app).toEqual({ id: app.id, name: app.name });
      }
      expect((await json(t, 'DELETE', `/api/tokens/${app.token_id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token));
      expect((await json(t, 'GET', '/api/me', undefined, issued.token)).statusCode).toBe(200);
    });
  });

  describe('creation answers say what was created', () => {
    it('POST /api/apps and POST /api/apps/{id}/tokens answer the app token\'s scopes, expires_at and allowed_cidrs, as GET /api/tokens/{id} shows them', async () => {
      const limited = await json(t, 'POST', '/api/tokens', { name: 'maker', scopes: ['apps:write', 'tokens:read'], expires_at: '2099-01-01T00:00:00.000Z', allowed_cidrs: ['203.0.113.0/24'] }, user.jwt);
      const maker = limited.json().token as string;
      const registered = await json(t, 'POST', '/api/apps', { name: 'limited' }, maker, '203.0.113.9');
      expect(registered.statusCode).toBe(201);
      const app = registered.json();
      expect(app).toMatchObject({ scopes: [], expires_at: '2099-01-01T00:00:00.000Z', allowed_cidrs: ['203.0.113.0/24'] });
      const issued = await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['203.0.113.128/25'] }, maker, '203.0.113.9');
      expect(issued.statusCode).toBe(201);
      expect(issued.json()).toMatchObject({ scopes: [], expires_at: '2099-01-01T00:00:00.000Z', allowed_cidrs: ['203.0.113.128/25'] });
      for (const [id, body] of [[app.token_id, app], [issued.json().token_id, issued.json()]]) {
        const stored = (await json(t, 'GET', `/api/tokens/${id}`, undefined, user.jwt)).json();
        expect({ scopes: body.scopes, expires_at: body.expires_at, allowed_cidrs: body.allowed_cidrs }).toEqual({
          scopes: stored.scopes,
          expires_at: stored.expires_at,
          allowed_cidrs: stored.allowed_cidrs,
        });
      }
    });
  });

  describe('DELETE /api/apps/{id}', () => {
    it('204; the app is gone and every one of its tokens is 401 on the next request', async () => {
      const app = await registerApp(t, user.jwt);
      const extra = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).json().token as string;
      expect((await json(t, 'GET', '/api/me', undefined, app.token)).statusCode).toBe(200);
      const res = await json(t, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token));
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, extra));
      expectProblem(await json(t, 'GET', `/api/apps/${app.id}`, undefined, user.jwt), 404, 'not_found');
      expectProblem(await json(t, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt), 404, 'not_found');
      expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt), 404, 'not_found');
    });
  });
});
