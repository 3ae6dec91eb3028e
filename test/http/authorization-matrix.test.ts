import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import {
  createApiToken,
  expectInsufficientScope,
  expectUnauthorized,
  json,
  login,
  registerApp,
  signup,
  type TestUser,
} from '../helpers/api.js';

/**
 * Every cell of the contract's authorization matrix (section 4), over HTTP. Resources that a cell
 * consumes (a logout, a delete) are created fresh for that cell.
 */
describe('authorization matrix', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  const api: Record<string, string> = {};
  let appToken: string;
  let ownAppId: string;
  let strangerAppId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await signup(t);
    stranger = await signup(t);
    for (const scope of ['none', 'apps:read', 'apps:write', 'tokens:read', 'all']) {
      const scopes = scope === 'none' ? [] : scope === 'all' ? ['apps:read', 'apps:write', 'tokens:read'] : [scope];
      api[scope] = (await createApiToken(t, owner.jwt, { name: scope, scopes })).token;
    }
    const ownApp = await registerApp(t, owner.jwt);
    ownAppId = ownApp.id;
    appToken = ownApp.token;
    strangerAppId = (await registerApp(t, stranger.jwt)).id;
  });
  afterAll(() => t.close());

  const freshApp = async () => (await registerApp(t, owner.jwt)).id;

  describe('POST /api/auth/logout', () => {
    it('user token: 204', async () => {
      const jwt = await login(t, owner.email);
      expect((await json(t, 'POST', '/api/auth/logout', undefined, jwt)).statusCode).toBe(204);
    });
    it('API token: 403 even with every scope', async () => {
      expectInsufficientScope(await json(t, 'POST', '/api/auth/logout', undefined, api.all), '*');
    });
    it('app token: 403', async () => {
      expectInsufficientScope(await json(t, 'POST', '/api/auth/logout', undefined, appToken), '*');
    });
    it('no token: 401', async () => {
      expectUnauthorized(await json(t, 'POST', '/api/auth/logout'));
    });
  });

  describe('GET /api/me', () => {
    it.each(['user', 'api none', 'api all', 'app'])('%s: 200', async (who) => {
      const token = who === 'user' ? owner.jwt : who === 'app' ? appToken : (api[who.slice(4)] as string);
      expect((await json(t, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
    });
    it('no token: 401', async () => expectUnauthorized(await json(t, 'GET', '/api/me')));
  });

  describe('POST /api/tokens', () => {
    it('user token: 201', async () => {
      expect((await json(t, 'POST', '/api/tokens', { name: 'x' }, owner.jwt)).statusCode).toBe(201);
    });
    it.each(['none', 'apps:read', 'apps:write', 'tokens:read', 'all'])('API token (%s): 403, no token can mint a token', async (scope) => {
      expectInsufficientScope(await json(t, 'POST', '/api/tokens', { name: 'x' }, api[scope]), '*');
    });
    it('app token: 403', async () => {
      expectInsufficientScope(await json(t, 'POST', '/api/tokens', { name: 'x' }, appToken), '*');
    });
    it('no token: 401', async () => expectUnauthorized(await json(t, 'POST', '/api/tokens', { name: 'x' })));
  });

  describe('GET /api/tokens', () => {
    it('user token: 200', async () => expect((await json(t, 'GET', '/api/tokens', undefined, owner.jwt)).statusCode).toBe(200));
    it('API token with tokens:read: 200', async () => {
      expect((await json(t, 'GET', '/api/tokens', undefined, api['tokens:read'])).statusCode).toBe(200);
    });
    it.each(['none', 'apps:read', 'apps:write'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'GET', '/api/tokens', undefined, api[scope]), 'tokens:read');
    });
    it('app token: 403', async () => expectInsufficientScope(await json(t, 'GET', '/api/tokens', undefined, appToken), 'tokens:read'));
    it('no token: 401', async () => expectUnauthorized(await json(t, 'GET', '/api/tokens')));
  });

  describe('DELETE /api/tokens/{id}', () => {
    it('user token, own token: 204', async () => {
      const { id } = await createApiToken(t, owner.jwt);
      expect((await json(t, 'DELETE', `/api/tokens/${id}`, undefined, owner.jwt)).statusCode).toBe(204);
    });
    it("user token, someone else's token: 404", async () => {
      const { id } = await createApiToken(t, stranger.jwt);
      expect((await json(t, 'DELETE', `/api/tokens/${id}`, undefined, owner.jwt)).statusCode).toBe(404);
    });
    it('API token: 403', async () => {
      const { id } = await createApiToken(t, owner.jwt);
      expectInsufficientScope(await json(t, 'DELETE', `/api/tokens/${id}`, undefined, api.all), '*');
    });
    it('app token: 403', async () => {
      const { id } = await createApiToken(t, owner.jwt);
      expectInsufficientScope(await json(t, 'DELETE', `/api/tokens/${id}`, undefined, appToken), '*');
    });
    it('no token: 401', async () => {
      const { id } = await createApiToken(t, owner.jwt);
      expectUnauthorized(await json(t, 'DELETE', `/api/tokens/${id}`));
    });
  });

  describe('POST /api/apps', () => {
    it('user token: 201', async () => expect((await json(t, 'POST', '/api/apps', { name: 'a' }, owner.jwt)).statusCode).toBe(201));
    it('API token with apps:write: 201', async () => {
      expect((await json(t, 'POST', '/api/apps', { name: 'a' }, api['apps:write'])).statusCode).toBe(201);
    });
    it.each(['none', 'apps:read', 'tokens:read'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'POST', '/api/apps', { name: 'a' }, api[scope]), 'apps:write');
    });
    it('app token: 403', async () => expectInsufficientScope(await json(t, 'POST', '/api/apps', { name: 'a' }, appToken), 'apps:write'));
    it('no token: 401', async () => expectUnauthorized(await json(t, 'POST', '/api/apps', { name: 'a' })));
  });

  describe('GET /api/apps', () => {
    it('user token: 200', async () => expect((await json(t, 'GET', '/api/apps', undefined, owner.jwt)).statusCode).toBe(200));
    it('API token with apps:read: 200', async () => {
      expect((await json(t, 'GET', '/api/apps', undefined, api['apps:read'])).statusCode).toBe(200);
    });
    it.each(['none', 'apps:write', 'tokens:read'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'GET', '/api/apps', undefined, api[scope]), 'apps:read');
    });
    it('app token: 403', async () => expectInsufficientScope(await json(t, 'GET', '/api/apps', undefined, appToken), 'apps:read'));
    it('no token: 401', async () => expectUnauthorized(await json(t, 'GET', '/api/apps')));
  });

  describe('GET /api/apps/{id}', () => {
    it('user token: 200 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'GET', `/api/apps/${ownAppId}`, undefined, owner.jwt)).statusCode).toBe(200);
      expect((await json(t, 'GET', `/api/apps/${strangerAppId}`, undefined, owner.jwt)).statusCode).toBe(404);
    });
    it('API token with apps:read: 200 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'GET', `/api/apps/${ownAppId}`, undefined, api['apps:read'])).statusCode).toBe(200);
      expect((await json(t, 'GET', `/api/apps/${strangerAppId}`, undefined, api['apps:read'])).statusCode).toBe(404);
    });
    it.each(['none', 'apps:write', 'tokens:read'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'GET', `/api/apps/${ownAppId}`, undefined, api[scope]), 'apps:read');
    });
    it('app token: 200 for its own app', async () => {
      const res = await json(t, 'GET', `/api/apps/${ownAppId}`, undefined, appToken);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: ownAppId });
    });
    it('app token: 403 for any other id, even one of the same owner', async () => {
      const sibling = await freshApp();
      for (const id of [sibling, strangerAppId, '00000000-0000-4000-8000-000000000000']) {
        expectInsufficientScope(await json(t, 'GET', `/api/apps/${id}`, undefined, appToken), 'apps:read');
      }
    });
    it('no token: 401', async () => expectUnauthorized(await json(t, 'GET', `/api/apps/${ownAppId}`)));
  });

  describe('DELETE /api/apps/{id}', () => {
    it('user token: 204 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'DELETE', `/api/apps/${await freshApp()}`, undefined, owner.jwt)).statusCode).toBe(204);
      expect((await json(t, 'DELETE', `/api/apps/${strangerAppId}`, undefined, owner.jwt)).statusCode).toBe(404);
    });
    it('API token with apps:write: 204 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'DELETE', `/api/apps/${await freshApp()}`, undefined, api['apps:write'])).statusCode).toBe(204);
      expect((await json(t, 'DELETE', `/api/apps/${strangerAppId}`, undefined, api['apps:write'])).statusCode).toBe(404);
    });
    it.each(['none', 'apps:read', 'tokens:read'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'DELETE', `/api/apps/${ownAppId}`, undefined, api[scope]), 'apps:write');
    });
    it('app token: 403, even for its own app', async () => {
      expectInsufficientScope(await json(t, 'DELETE', `/api/apps/${ownAppId}`, undefined, appToken), 'apps:write');
    });
    it('no token: 401', async () => expectUnauthorized(await json(t, 'DELETE', `/api/apps/${ownAppId}`)));
  });

  describe('POST /api/apps/{id}/tokens', () => {
    it('user token: 201 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'POST', `/api/apps/${ownAppId}/tokens`, undefined, owner.jwt)).statusCode).toBe(201);
      expect((await json(t, 'POST', `/api/apps/${strangerAppId}/tokens`, undefined, owner.jwt)).statusCode).toBe(404);
    });
    it('API token with apps:write: 201 for own, 404 for someone else\'s', async () => {
      expect((await json(t, 'POST', `/api/apps/${ownAppId}/tokens`, undefined, api['apps:write'])).statusCode).toBe(201);
      expect((await json(t, 'POST', `/api/apps/${strangerAppId}/tokens`, undefined, api['apps:write'])).statusCode).toBe(404);
    });
    it.each(['none', 'apps:read', 'tokens:read'])('API token (%s): 403', async (scope) => {
      expectInsufficientScope(await json(t, 'POST', `/api/apps/${ownAppId}/tokens`, undefined, api[scope]), 'apps:write');
    });
    it('app token: 403, no token can mint a token', async () => {
      expectInsufficientScope(await json(t, 'POST', `/api/apps/${ownAppId}/tokens`, undefined, appToken), 'apps:write');
    });
    it('no token: 401', async () => expectUnauthorized(await json(t, 'POST', `/api/apps/${ownAppId}/tokens`)));
  });

  describe('POST /api/auth/signup and /api/auth/login accept any caller', () => {
    it.each(['user', 'api', 'app', 'none'])('%s', async (who) => {
      const token = who === 'user' ? owner.jwt : who === 'api' ? api.all : who === 'app' ? appToken : undefined;
      expect((await json(t, 'POST', '/api/auth/login', { email: owner.email, password: owner.password }, token)).statusCode).toBe(200);
    });
  });
});
