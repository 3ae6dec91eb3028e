import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenDigest } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectInvalidToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

const TOKEN = /^rz_[0-9A-Za-z]{49}$/;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('API tokens', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
  });
  afterAll(() => t.close());

  describe('POST /api/tokens', () => {
    it('201 with the value once, trimmed name, scopes, timestamps; no-store', async () => {
      const res = await json(t, 'POST', '/api/tokens', { name: '  deploy  ', scopes: ['tokens:read', 'apps:read'] }, user.jwt);
      expect(res.statusCode).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(body).toEqual({
        id: expect.any(String),
        token: expect.stringMatching(TOKEN),
        name: 'deploy',
        scopes: ['apps:read', 'tokens:read'],
        created_at: expect.stringMatching(ISO_Z),
        expires_at: null,
        allowed_cidrs: null,
      });
      expect(body.created_at).toBe(new Date(clock.now()).toISOString());
    });

    it('omitted scopes means none: the token can call GET /api/me only', async () => {
      const { token } = await createApiToken(t, user.jwt);
      const me = await json(t, 'GET', '/api/me', undefined, token);
      expect(me.json().auth.scopes).toEqual([]);
      expect((await json(t, 'GET', '/api/tokens', undefined, token)).statusCode).toBe(403);
    });

    it('expires_at in another offset is stored and returned in UTC', async () => {
      const future = new Date(clock.now() + 86_400_000);
      const offset = future.toISOString().replace('Z', '+00:00');
      const res = await json(t, 'POST', '/api/tokens', { name: 'x', expires_at: offset }, user.jwt);
      expect(res.json().expires_at).toBe(future.toISOString());
    });

    it.each([
      ['an empty name', { name: '' }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      // Regression: names that display as nothing (zero-width spaces, a soft hyphen, a BOM) were stored.
      ['a name of invisible characters only', { name: '\u200b \u00ad\ufeff\u2060' }, 'name'],
      ['a name of 101 characters', { name: 'x'.repeat(101) }, 'name'],
      ['a name with a newline', { name: 'a\nb' }, 'name'],
      ['a missing name', {}, 'name'],
      ['an unknown scope', { name: 'x', scopes: ['admin'] }, 'scopes.0'],
      ['duplicate scopes', { name: 'x', scopes: ['apps:read', 'apps:read'] }, 'scopes'],
      ['scopes that is not an array', { name: 'x', scopes: 'apps:read' }, 'scopes'],
      ['expires_at in the past', { name: 'x', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      ['expires_at not a date', { name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      ['a typo for scopes', { name: 'x', scope: ['apps:read'] }, 'scope'],
      ['a smuggled user_id', { name: 'x', user_id: '00000000-0000-4000-8000-000000000000' }, 'user_id'],
    ])('400 for %s', async (_name, body, field) => {
      const problem = expectProblem(await json(t, 'POST', '/api/tokens', body, user.jwt), 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('a 100-character name is accepted (counted in characters, not bytes)', async () => {
      expect((await json(t, 'POST', '/api/tokens', { name: 'é'.repeat(100) }, user.jwt)).statusCode).toBe(201);
    });

    it('stores only a digest: the value is nowhere in the database', async () => {
      const { token } = await createApiToken(t, user.jwt);
      const rows = await t.services.database.db.selectFrom('tokens').selectAll().execute();
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(token);
      expect(dump).toContain(tokenDigest(token));
    });
  });

  describe('GET /api/tokens', () => {
    it('lists active API tokens newest first, with hint and last use, never value or digest', async () => {
      const fresh = await signup(t);
      const first = await createApiToken(t, fresh.jwt, { name: 'first', scopes: ['tokens:read'] });
      clock.advance(1000);
      const second = await createApiToken(t, fresh.jwt, { name: 'second' });
      clock.advance(1000);
      const revoked = await createApiToken(t, fresh.jwt, { name: 'revoked' });
      await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, fresh.jwt);
      await registerApp(t, fresh.jwt); // app tokens are not listed here
      await json(t, 'GET', '/api/me', undefined, first.token);

      const res = await json(t, 'GET', '/api/tokens', undefined, first.token);
      expect(res.statusCode).toBe(200);
      const { tokens } = res.json();
      expect(tokens.map((x: { name: string }) => x.name)).toEqual(['second', 'first']);
      expect(tokens[1]).toEqual({
        id: first.id,
        name: 'first',
        scopes: ['tokens:read'],
        created_at: expect.stringMatching(ISO_Z),
        expires_at: null,
        last_used_at: new Date(clock.now()).toISOString(),
        hint: `rz_${first.token.slice(-4)}`,
        state: 'active',
        revoked_at: null,
        derivable: false,
        children_revoked_before: null,
        children_seen: 0,
      });
      expect(tokens[0].last_used_at).toBeNull();
      expect(res.body).not.toContain(first.token);
      expect(res.body).not.toContain(second.token);
      expect(res.body).not.toContain(tokenDigest(first.token));
    });

    it("never shows another user's tokens", async () => {
      const a = await signup(t);
      const b = await signup(t);
      await createApiToken(t, b.jwt, { name: 'b-token' });
      expect((await json(t, 'GET', '/api/tokens', undefined, a.jwt)).json()).toEqual({ tokens: [], next_cursor: null });
    });

    it('expired tokens drop out of the list and stop working', async () => {
      const fresh = await signup(t);
      const { token } = await createApiToken(t, fresh.jwt, { name: 'short', expires_at: new Date(clock.now() + 60_000).toISOString() });
      expect((await json(t, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
      clock.advance(60_000);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token));
      const relogged = await json(t, 'POST', '/api/auth/login', { email: fresh.email, password: fresh.password });
      expect((await json(t, 'GET', '/api/tokens', undefined, relogged.json().token)).json().tokens).toEqual([]);
    });
  });

  describe('DELETE /api/tokens/{id}', () => {
    it('204 with an empty body; the token is 401 on the very next request; a second delete is 404', async () => {
      const { id, token } = await createApiToken(t, user.jwt);
      expect((await json(t, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
      const res = await json(t, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token));
      expectProblem(await json(t, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt), 404, 'not_found');
    });

    it('revokes an app token of one of your apps', async () => {
      const app = await registerApp(t, user.jwt);
      expect((await json(t, 'DELETE', `/api/tokens/${app.token_id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token));
    });

    it.each(['not-a-uuid', '12345', '00000000-0000-4000-8000-000000000000', 'ZZZZZZZZ-0000-4000-8000-000000000000', '%00', 'x'.repeat(500), 'x'.repeat(5000)])(
      '404 for the id %s, never 500',
      async (id) => {
        expectProblem(await json(t, 'DELETE', `/api/tokens/${encodeURIComponent(id)}`, undefined, user.jwt), 404, 'not_found');
      },
    );

    it("404 for someone else's token, which keeps working", async () => {
      const other = await signup(t);
      const theirs = await createApiToken(t, other.jwt);
      const theirApp = await registerApp(t, other.jwt);
      expectProblem(await json(t, 'DELETE', `/api/tokens/${theirs.id}`, undefined, user.jwt), 404, 'not_found');
      expectProblem(await json(t, 'DELETE', `/api/tokens/${theirApp.token_id}`, undefined, user.jwt), 404, 'not_found');
      expect((await json(t, 'GET', '/api/me', undefined, theirs.token)).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, theirApp.token)).statusCode).toBe(200);
    });
  });
});

describe('malformed paths', () => {
  it('a badly percent-encoded id is 404, not a framework error body', async () => {
    const t = await startTestApp();
    try {
      const user = await signup(t);
      expectProblem(await t.inject({ method: 'DELETE', url: '/api/tokens/%E0%A4%A', headers: { authorization: `Bearer ${user.jwt}` } }), 404, 'not_found');
    } finally {
      await t.close();
    }
  });

  it('an id over 8,192 characters was a 400 "request is not valid" and left no access line: now 404 like any malformed id, and logged', async () => {
    const t = await startTestApp();
    try {
      const user = await signup(t);
      const from = t.logs.length;
      const ids: string[] = [];
      for (const [method, url] of [
        ['GET', `/api/tokens/${'a'.repeat(8_193)}`],
        ['DELETE', `/api/tokens/${'a'.repeat(20_000)}`],
        ['POST', `/api/tokens/${'a'.repeat(8_193)}/rotate`],
        ['DELETE', '/api/tokens/%E0%A4%A'],
      ] as const) {
        const res = await t.inject({ method, url, headers: { authorization: `Bearer ${user.jwt}` } });
        expectProblem(res, 404, 'not_found');
        ids.push(String(res.headers['x-request-id']));
      }
      const lines = (await t.settledLogs()).slice(from).map((line) => JSON.parse(line) as { msg?: string; request_id?: string; status?: number });
      for (const id of ids) expect(lines.filter((line) => line.msg === 'request' && line.request_id === id).map((line) => line.status)).toEqual([404]);
    } finally {
      await t.close();
    }
  });
});

describe('last_used_at', () => {
  it('costs no write per request: uses are kept in memory, shown at once, and written in one flush', async () => {
    const clock = new TestClock();
    // An hour between flushes: nothing is written during the test unless a request writes it.
    const env = { LAST_USED_FLUSH_MS: '3600000' };
    const shared = tempDir();
    const first = await startTestApp({ clock, env, dir: shared.dir });
    const owner = await signup(first);
    const { id, token } = await createApiToken(first, owner.jwt, { name: 'busy' });
    const stored = () => first.services.database.db.selectFrom('tokens').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow();
    for (let i = 0; i < 50; i++) {
      clock.advance(10);
      expect((await json(first, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
    }
    const lastUse = new Date(clock.now()).toISOString();
    expect((await stored()).last_used_at).toBeNull();
    const listed = (await json(first, 'GET', '/api/tokens', undefined, owner.jwt)).json().tokens;
    expect(listed.find((x: { id: string }) => x.id === id).last_used_at).toBe(lastUse);
    // Shutting down flushes; the next process reads the last use from the store.
    await first.close();
    const second = await startTestApp({ clock, env, dir: shared.dir });
    try {
      const res = await json(second, 'GET', '/api/tokens', undefined, owner.jwt);
      const relisted = res.json().tokens;
      expect(relisted.find((x: { id: string }) => x.id === id).last_used_at).toBe(lastUse);
    } finally {
      await second.close();
      shared.remove();
    }
  });
});
