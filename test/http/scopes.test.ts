import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_DESCRIPTIONS } from '../../src/tokens/scopes.js';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import { createApiToken, expectInsufficientScope, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { scopesFileEnv } from '../helpers/scopes.js';

/** Contract §7, scope catalogue: the platform's scopes beside the built-in ones. */
describe('the scope catalogue', () => {
  const files = tempDir();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: scopesFileEnv(files.dir) });
    user = await signup(t);
  });
  afterAll(async () => {
    await t.close();
    files.remove();
  });

  const countTokens = async () => ((await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json() as { tokens: unknown[] }).tokens.length;
  const countApps = async () => ((await json(t, 'GET', '/api/apps', undefined, user.jwt)).json() as { apps: unknown[] }).apps.length;
  const scopesOf = async (token: string) => (await json(t, 'GET', '/api/me', undefined, token)).json().auth.scopes as string[];

  it('GET /api/scopes needs no token and lists the built-in scopes, then the platform\'s with their token types', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/scopes' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      scopes: [
        ...Object.entries(SCOPE_DESCRIPTIONS).map(([name, description]) => ({ name, description, token_types: ['api_token'], builtin: true })),
        { name: 'games:publish', description: 'Publish games to the catalogue.', token_types: ['api_token', 'app_token'], builtin: false },
        { name: 'scores:write', description: 'Post scores to the boards.', token_types: ['app_token'], builtin: false },
        { name: 'catalogue:admin:read', description: 'Read the catalogue admin pages.', token_types: ['api_token'], builtin: false },
      ],
    });
  });

  it('without SCOPES_FILE it lists the built-in scopes only', async () => {
    const plain = await startTestApp();
    try {
      const names = ((await plain.inject({ method: 'GET', url: '/api/scopes' })).json() as { scopes: Array<{ name: string }> }).scopes.map((s) => s.name);
      expect(names).toEqual(Object.keys(SCOPE_DESCRIPTIONS));
    } finally {
      await plain.close();
    }
  });

  it('POST /api/tokens accepts platform scopes that allow API tokens; they show in /api/me and the list', async () => {
    const created = await createApiToken(t, user.jwt, { name: 'publisher', scopes: ['games:publish', 'catalogue:admin:read', 'apps:read'] });
    expect(await scopesOf(created.token)).toEqual(['apps:read', 'catalogue:admin:read', 'games:publish']);
    const listed = (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json().tokens as Array<{ id: string; scopes: string[] }>;
    expect(listed.find((tk) => tk.id === created.id)?.scopes).toEqual(['apps:read', 'catalogue:admin:read', 'games:publish']);
  });

  it.each([
    ['a scope only app tokens may carry', ['scores:write']],
    ['an undeclared scope', ['games:delete']],
    ['a valid scope beside a bad one', ['games:publish', 'games:delete']],
  ])('POST /api/tokens with %s is 400 naming scopes, and creates nothing', async (_what, scopes) => {
    const before = await countTokens();
    const problem = expectProblem(await json(t, 'POST', '/api/tokens', { name: 'x', scopes }, user.jwt), 400, 'validation_failed');
    expect((problem.errors as Array<{ field: string }>).every((e) => e.field === 'scopes' || e.field.startsWith('scopes.'))).toBe(true);
    expect(await countTokens()).toBe(before);
  });

  it('POST /api/apps gives its first app token the scopes asked for, and none by default', async () => {
    const scoped = await registerApp(t, user.jwt, { scopes: ['scores:write', 'games:publish'] });
    expect(await scopesOf(scoped.token)).toEqual(['games:publish', 'scores:write']);
    const plain = await registerApp(t, user.jwt);
    expect(await scopesOf(plain.token)).toEqual([]);
  });

  it('POST /api/apps/{id}/tokens gives the new token the scopes asked for, and none without a body', async () => {
    const app = await registerApp(t, user.jwt);
    const scoped = await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes: ['scores:write'] }, user.jwt);
    expect(scoped.statusCode).toBe(201);
    expect(await scopesOf(scoped.json().token)).toEqual(['scores:write']);
    const bare = await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt);
    expect(await scopesOf(bare.json().token)).toEqual([]);
    const empty = await json(t, 'POST', `/api/apps/${app.id}/tokens`, {}, user.jwt);
    expect(await scopesOf(empty.json().token)).toEqual([]);
  });

  it.each([
    ['a built-in scope', ['apps:write']],
    ['a scope only API tokens may carry', ['catalogue:admin:read']],
    ['an undeclared scope', ['scores:delete']],
    ['a scope twice', ['scores:write', 'scores:write']],
    ['scopes that is not an array', 'scores:write'],
  ])('app registration and app token issue with %s are 400 naming scopes, and create nothing', async (_what, scopes) => {
    const app = await registerApp(t, user.jwt);
    const before = await countApps();
    const named = (problem: Record<string, unknown>) =>
      expect((problem.errors as Array<{ field: string }>).some((e) => e.field === 'scopes' || e.field.startsWith('scopes.'))).toBe(true);
    named(expectProblem(await json(t, 'POST', '/api/apps', { name: 'x', scopes }, user.jwt), 400, 'validation_failed'));
    expect(await countApps()).toBe(before);
    named(expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes }, user.jwt), 400, 'validation_failed'));
    // Only the app's first token exists: a revoke of anything else would have to 404.
    const ids = await t.services.database.db.selectFrom('tokens').select('id').where('app_id', '=', app.id).execute();
    expect(ids.map((r) => r.id)).toEqual([app.token_id]);
  });

  describe('an API token with apps:write minted app tokens wider than itself: now it gives nothing it lacks', () => {
    const stored = async (tokenId: string) =>
      t.services.database.db.selectFrom('tokens').select(['scopes', 'allowed_cidrs', 'expires_at']).where('id', '=', tokenId).executeTakeFirstOrThrow();
    const namedField = (res: Awaited<ReturnType<typeof json>>, field: string) =>
      expect((expectProblem(res, 400, 'validation_failed').errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);

    it('scopes: only those the API token holds; an app-only scope never', async () => {
      const writer = (await createApiToken(t, user.jwt, { scopes: ['apps:write'] })).token;
      const before = await countApps();
      namedField(await json(t, 'POST', '/api/apps', { name: 'wider', scopes: ['games:publish'] }, writer), 'scopes');
      namedField(await json(t, 'POST', '/api/apps', { name: 'app-only', scopes: ['scores:write'] }, writer), 'scopes');
      expect(await countApps()).toBe(before);
      const app = (await json(t, 'POST', '/api/apps', { name: 'plain' }, writer)).json() as { id: string; token: string };
      expect(await scopesOf(app.token)).toEqual([]);
      namedField(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes: ['games:publish'] }, writer), 'scopes');
      const publisher = (await createApiToken(t, user.jwt, { scopes: ['apps:write', 'games:publish'] })).token;
      const allowed = await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes: ['games:publish'] }, publisher);
      expect(allowed.statusCode, allowed.body).toBe(201);
      expect(await scopesOf(allowed.json().token)).toEqual(['games:publish']);
      // A user token gives whatever the catalogue allows, as before.
      expect((await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes: ['scores:write'] }, user.jwt)).statusCode).toBe(201);
    });

    it('networks: inside the API token\'s allow-list, which the app token takes when it asks for none', async () => {
      const fenced = (await createApiToken(t, user.jwt, { scopes: ['apps:write'], allowed_cidrs: ['127.0.0.0/8'] })).token;
      const app = (await json(t, 'POST', '/api/apps', { name: 'fenced' }, fenced)).json() as { id: string; token_id: string };
      expect((await stored(app.token_id)).allowed_cidrs).toBe('["127.0.0.0/8"]');
      namedField(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['0.0.0.0/0'] }, fenced), 'allowed_cidrs');
      const inside = await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['127.0.0.1/32'] }, fenced);
      expect(inside.statusCode, inside.body).toBe(201);
      expect((await stored(inside.json().token_id)).allowed_cidrs).toBe('["127.0.0.1/32"]');
    });

    it('lifetime: no later than the API token\'s own expiry', async () => {
      const expiresAt = new Date(Date.now() + 2 * 3600_000).toISOString();
      const brief = (await createApiToken(t, user.jwt, { scopes: ['apps:write'], expires_at: expiresAt })).token;
      const app = (await json(t, 'POST', '/api/apps', { name: 'brief' }, brief)).json() as { id: string; token_id: string };
      expect(Date.parse((await stored(app.token_id)).expires_at ?? '')).toBe(Date.parse(expiresAt));
      const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, brief)).json() as { token_id: string };
      expect(Date.parse((await stored(issued.token_id)).expires_at ?? '')).toBe(Date.parse(expiresAt));
      expect((await stored((await registerApp(t, user.jwt)).token_id)).expires_at).toBeNull();
    });
  });

  it('POST /api/apps/{id}/tokens refuses an unknown field, a form body and another user\'s app as before', async () => {
    const app = await registerApp(t, user.jwt);
    expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scope: ['scores:write'] }, user.jwt), 400, 'validation_failed');
    const form = await t.inject({
      method: 'POST',
      url: `/api/apps/${app.id}/tokens`,
      headers: { authorization: `Bearer ${user.jwt}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'scopes=scores:write',
    });
    expectProblem(form, 415, 'unsupported_media_type');
    const stranger = await signup(t);
    expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { scopes: ['scores:write'] }, stranger.jwt), 404, 'not_found');
  });

  it('the API document lists the catalogue\'s scopes where tokens are made, and the app token body as optional', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
    const body = (path: string) => doc.paths[path].post.requestBody;
    expect(body('/api/tokens').content['application/json'].schema.properties.scopes.items.enum).toEqual(['apps:read', 'apps:write', 'tokens:read', 'games:publish', 'catalogue:admin:read']);
    expect(body('/api/apps').content['application/json'].schema.properties.scopes.items.enum).toEqual(['games:publish', 'scores:write']);
    expect(body('/api/apps/{id}/tokens').required).toBe(false);
    expect(doc.paths['/api/apps/{id}/tokens'].post).not.toHaveProperty('x-optional-body');
  });

  it('platform scopes grant nothing on rz-auth\'s own routes', async () => {
    const app = await registerApp(t, user.jwt, { scopes: ['scores:write', 'games:publish'] });
    expectInsufficientScope(await json(t, 'GET', '/api/apps', undefined, app.token), 'apps:read');
    const { token } = await createApiToken(t, user.jwt, { scopes: ['games:publish', 'catalogue:admin:read'] });
    expectInsufficientScope(await json(t, 'GET', '/api/tokens', undefined, token), 'tokens:read');
  });
});
