import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore } from '../../src/changes/store.js';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import {
  createApiToken,
  expectInsufficientScope,
  expectInvalidToken,
  expectProblem,
  json,
  login,
  PASSWORD,
  registerApp,
  signup,
  type TestUser,
} from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';

const NEW_PASSWORD = 'a brand new and rather long passphrase';

interface SessionItem {
  id: string;
  created_at: string;
  last_used_at: string | null;
  ip: string | null;
  user_agent: string | null;
  current: boolean;
}

/** Logs in from a given client address and user agent; returns the JWT. */
async function loginFrom(t: TestApp, email: string, client: { from?: string; ua?: string } = {}, password = PASSWORD): Promise<string> {
  const res = await t.inject({
    method: 'POST',
    url: '/api/auth/login',
    remoteAddress: client.from ?? '127.0.0.1',
    headers: { 'content-type': 'application/json', ...(client.ua === undefined ? {} : { 'user-agent': client.ua }) },
    payload: JSON.stringify({ email, password }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { token: string }).token;
}

const me = (t: TestApp, jwt: string) => json(t, 'GET', '/api/me', undefined, jwt);

async function sessionsOf(t: TestApp, jwt: string): Promise<SessionItem[]> {
  const res = await json(t, 'GET', '/api/auth/sessions', undefined, jwt);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { sessions: SessionItem[] }).sessions;
}

/** The events recorded in the change log since `before`, as GET /api/events would stream them. */
async function eventsSince(t: TestApp, before: number) {
  return (await new ChangeStore(t.services.database.db).listAfter(before)).map((c) => c.event);
}

const latestChange = (t: TestApp) => new ChangeStore(t.services.database.db).latestId();

describe('accounts: password, sessions, deletion', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/auth/password', () => {
    it('204: the new password works, the old one does not, every other session ends and this one stays', async () => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const third = await login(t, user.email);
      const before = await latestChange(t);
      const res = await json(t, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }, user.jwt);
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe('');
      expect((await me(t, user.jwt)).statusCode).toBe(200);
      expectInvalidToken(await me(t, other));
      expectInvalidToken(await me(t, third));
      expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD }), 401, 'invalid_credentials');
      await login(t, user.email, NEW_PASSWORD);
      const events = await eventsSince(t, before);
      expect(events).toHaveLength(2);
      for (const event of events) expect(event).toMatchObject({ type: 'session.revoked', data: { user_id: user.id } });
    });

    it.each([
      ['too short', 'short pass 123'],
      ['common', 'passwordpassword'],
      ['one repeated character', 'aaaaaaaaaaaaaaaa'],
      ['over 1024 bytes', 'é'.repeat(513)],
      ['the account\'s email', 'EMAIL'],
    ])('400 naming new_password for a new password that is %s; nothing changes', async (_name, candidate) => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const newPassword = candidate === 'EMAIL' ? user.email : candidate;
      const problem = expectProblem(
        await json(t, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: newPassword }, user.jwt),
        400,
        'validation_failed',
      );
      expect(problem.errors).toEqual([expect.objectContaining({ field: 'new_password' })]);
      expect((await me(t, other)).statusCode).toBe(200);
      await login(t, user.email);
    });

    it('two changes racing from two sessions both answered 204, and the one committed last set the password: now the loser is refused', async () => {
      for (let trial = 0; trial < 4; trial++) {
        const owner = await signup(t);
        const intruder = await login(t, owner.email);
        const change = (jwt: string, newPassword: string) => json(t, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: newPassword }, jwt);
        const [mine, theirs] = await Promise.all([change(owner.jwt, NEW_PASSWORD), change(intruder, `${NEW_PASSWORD} of the intruder`)]);
        const statuses = [mine.statusCode, theirs.statusCode].sort();
        expect(statuses, `${mine.body} ${theirs.body}`).toEqual([204, 401]);
        const winner = mine.statusCode === 204 ? NEW_PASSWORD : `${NEW_PASSWORD} of the intruder`;
        const loser = mine.statusCode === 204 ? theirs : mine;
        // Its session was ended by the winner: invalid_token; or, refused after, the old password no longer matched.
        expect(['invalid_token', 'invalid_credentials']).toContain(loser.json().code);
        // The password of the answer that said 204 is the one that works, and only its session lives.
        await login(t, owner.email, winner);
        expect([(await me(t, owner.jwt)).statusCode, (await me(t, intruder)).statusCode].sort()).toEqual([200, 401]);
      }
    });

    // Regression: a raw invisible character or full-width letters hid the token from the
    // redaction, and errors[0].field held it, readable once the character was dropped or NFKC applied.
    it.each([
      ['split by a soft hyphen', (token: string) => `${token.slice(0, 8)}\u00ad${token.slice(8)}`],
      ['split by a zero-width space', (token: string) => `${token.slice(0, 20)}\u200b${token.slice(20)}`],
      ['split by a bidirectional override', (token: string) => `${token.slice(0, 8)}\u202e${token.slice(8)}`],
      ['split by a NUL', (token: string) => `${token.slice(0, 8)}\u0000${token.slice(8)}`],
      ['in full-width letters', (token: string) => token.replace(/[0-9A-Za-z_]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))],
    ])('400 validation_failed echoed an unknown field named after a token %s in errors[0].field: now [REDACTED]', async (_what, disguise) => {
      const user = await signup(t);
      const { token } = await createApiToken(t, user.jwt);
      const body = { current_password: PASSWORD, new_password: NEW_PASSWORD, [disguise(token)]: 1 };
      const problem = expectProblem(await json(t, 'POST', '/api/auth/password', body, user.jwt), 400, 'validation_failed');
      expect(problem.errors).toEqual([{ field: '[REDACTED]', message: 'is not a known field' }]);
      // Positive control: an ordinary unknown field is named as it came.
      const named = expectProblem(await json(t, 'POST', '/api/auth/password', { ...body, [disguise(token)]: undefined, nickname: 1 }, user.jwt), 400, 'validation_failed');
      expect(named.errors).toEqual([{ field: 'nickname', message: 'is not a known field' }]);
      await login(t, user.email);
    });

    it('401 invalid_credentials for a wrong current password; nothing changes', async () => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const problem = expectProblem(
        await json(t, 'POST', '/api/auth/password', { current_password: 'not the password at all', new_password: NEW_PASSWORD }, user.jwt),
        401,
        'invalid_credentials',
      );
      expect(problem.detail).toBe('The password is incorrect.');
      expect((await me(t, user.jwt)).statusCode).toBe(200);
      expect((await me(t, other)).statusCode).toBe(200);
      await login(t, user.email);
    });

    it.each([
      ['a missing field', { current_password: PASSWORD }],
      ['an unknown field', { current_password: PASSWORD, new_password: NEW_PASSWORD, password: PASSWORD }],
      ['a number for a password', { current_password: PASSWORD, new_password: 123456789012345 }],
    ])('400 for %s', async (_name, body) => {
      const user = await signup(t);
      expectProblem(await json(t, 'POST', '/api/auth/password', body, user.jwt), 400, 'validation_failed');
    });
  });

  describe('GET /api/auth/sessions', () => {
    it('lists the active sessions, newest first, with address, user agent and the current one marked', async () => {
      const clock = new TestClock();
      const app = await startTestApp({ clock });
      try {
        const user = await signup(app);
        clock.advance(1000);
        const phone = await loginFrom(app, user.email, { from: '203.0.113.9', ua: 'Phone/1.0' });
        clock.advance(1000);
        const laptop = await loginFrom(app, user.email, { from: '2001:db8::7', ua: 'Laptop/2.0' });
        clock.advance(1000);
        const gone = await loginFrom(app, user.email);
        expect((await json(app, 'POST', '/api/auth/logout', undefined, gone)).statusCode).toBe(204);
        const sessions = await sessionsOf(app, laptop);
        expect(sessions.map(({ ip, user_agent, current }) => [ip, user_agent, current])).toEqual([
          ['2001:db8::7', 'Laptop/2.0', true],
          ['203.0.113.9', 'Phone/1.0', false],
          ['127.0.0.1', 'lightMyRequest', false],
        ]);
        expect(sessions.map((s) => s.created_at)).toEqual([2, 1, 0].map((n) => new Date(Date.parse('2026-11-21T09:30:00.000Z') + n * 1000).toISOString()));
        expect(Object.keys(sessions[0] ?? {}).sort()).toEqual(['amr', 'auth_time', 'created_at', 'current', 'id', 'ip', 'last_used_at', 'user_agent']);
        // The phone's own list marks the phone's session.
        expect((await sessionsOf(app, phone)).filter((s) => s.current).map((s) => s.user_agent)).toEqual(['Phone/1.0']);
        // Someone else's sessions never appear.
        const stranger = await signup(app);
        expect((await sessionsOf(app, stranger.jwt)).map((s) => s.current)).toEqual([true]);
      } finally {
        await app.close();
      }
    });

    it('keeps a hostile user agent printable and short', async () => {
      const user = await signup(t);
      // Separated: a run of 40 letters or digits is redacted as a token body would be.
      const jwt = await loginFrom(t, user.email, { ua: `Evil\u001b[31m\u202eAgent ${'x/'.repeat(2500)}` });
      const mine = (await sessionsOf(t, jwt)).find((s) => s.current);
      expect(mine?.user_agent).toMatch(/^Evil\[31mAgent (x\/)+x?…$/);
      expect([...(mine?.user_agent ?? '')]).toHaveLength(256);
    });

    it('last_used_at costs no write per request: shown at once, written at the flush', async () => {
      const clock = new TestClock();
      const env = { LAST_USED_FLUSH_MS: '3600000' };
      const shared = tempDir();
      const first = await startTestApp({ clock, env, dir: shared.dir });
      const user = await signup(first);
      const other = await login(first, user.email);
      const otherId = (await sessionsOf(first, user.jwt)).find((s) => !s.current)?.id ?? '';
      const stored = () => first.services.database.db.selectFrom('sessions').select('last_used_at').where('id', '=', otherId).executeTakeFirstOrThrow();
      for (let i = 0; i < 20; i++) {
        clock.advance(10);
        expect((await me(first, other)).statusCode).toBe(200);
      }
      const lastUse = new Date(clock.now()).toISOString();
      clock.advance(1000);
      expect((await stored()).last_used_at).toBeNull();
      const listed = await sessionsOf(first, user.jwt);
      expect(listed.find((s) => s.id === otherId)?.last_used_at).toBe(lastUse);
      // The list itself is a use of the current session.
      expect(listed.find((s) => s.current)?.last_used_at).toBe(new Date(clock.now()).toISOString());
      await first.close();
      const second = await startTestApp({ clock, env, dir: shared.dir });
      try {
        expect((await sessionsOf(second, user.jwt)).find((s) => s.id === otherId)?.last_used_at).toBe(lastUse);
      } finally {
        await second.close();
        shared.remove();
      }
    });
  });

  describe('DELETE /api/auth/sessions/{id}', () => {
    it("204 ends that session (its JWT is refused at once, session.revoked recorded); the caller's stays", async () => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const otherId = (await sessionsOf(t, user.jwt)).find((s) => !s.current)?.id ?? '';
      const before = await latestChange(t);
      const res = await json(t, 'DELETE', `/api/auth/sessions/${otherId}`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(204);
      expectInvalidToken(await me(t, other));
      expect((await me(t, user.jwt)).statusCode).toBe(200);
      expect(await eventsSince(t, before)).toEqual([{ type: 'session.revoked', data: { session_id: otherId, user_id: user.id } }]);
      expect((await sessionsOf(t, user.jwt)).map((s) => s.id)).not.toContain(otherId);
    });

    it('ending the current session is logging out', async () => {
      const user = await signup(t);
      const currentId = (await sessionsOf(t, user.jwt))[0]?.id ?? '';
      expect((await json(t, 'DELETE', `/api/auth/sessions/${currentId}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(t, user.jwt));
    });

    it("404, the same body, for an unknown, malformed, ended or another user's session", async () => {
      const user = await signup(t);
      const stranger = await signup(t);
      const strangerSession = (await sessionsOf(t, stranger.jwt))[0]?.id ?? '';
      const ended = await login(t, user.email);
      const endedId = (await sessionsOf(t, ended)).find((s) => s.current)?.id ?? '';
      await json(t, 'POST', '/api/auth/logout', undefined, ended);
      const bodies = [];
      for (const id of [randomUUID(), 'not-a-uuid', endedId, strangerSession, `${strangerSession.toUpperCase()}`]) {
        const problem = expectProblem(await json(t, 'DELETE', `/api/auth/sessions/${encodeURIComponent(id)}`, undefined, user.jwt), 404, 'not_found');
        bodies.push({ ...problem, request_id: '' });
      }
      expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
      expect((await me(t, stranger.jwt)).statusCode).toBe(200);
    });
  });

  describe('DELETE /api/auth/sessions', () => {
    it('204 ends every session but the current one, each recorded as session.revoked', async () => {
      const user = await signup(t);
      const others = [await login(t, user.email), await login(t, user.email), await login(t, user.email)];
      const stranger = await signup(t);
      const before = await latestChange(t);
      expect((await json(t, 'DELETE', '/api/auth/sessions', undefined, user.jwt)).statusCode).toBe(204);
      for (const jwt of others) expectInvalidToken(await me(t, jwt));
      expect((await me(t, user.jwt)).statusCode).toBe(200);
      expect((await me(t, stranger.jwt)).statusCode).toBe(200);
      const events = await eventsSince(t, before);
      expect(events.map((e) => e?.type)).toEqual(['session.revoked', 'session.revoked', 'session.revoked']);
      expect((await sessionsOf(t, user.jwt)).map((s) => s.current)).toEqual([true]);
      // Nothing left to end: still 204, nothing recorded.
      const after = await latestChange(t);
      expect((await json(t, 'DELETE', '/api/auth/sessions', undefined, user.jwt)).statusCode).toBe(204);
      expect(await latestChange(t)).toBe(after);
    });
  });

  describe('DELETE /api/me', () => {
    async function richUser(): Promise<{ user: TestUser; apiToken: string; appToken: string; other: string }> {
      const user = await signup(t);
      const apiToken = (await createApiToken(t, user.jwt, { scopes: ['apps:read'] })).token;
      const appToken = (await registerApp(t, user.jwt)).token;
      const other = await login(t, user.email);
      return { user, apiToken, appToken, other };
    }

    it('204: the user, their tokens, apps, app tokens and sessions are gone; user.deleted recorded; the name is free again', async () => {
      const { user, apiToken, appToken, other } = await richUser();
      const before = await latestChange(t);
      const res = await json(t, 'DELETE', '/api/me', { password: PASSWORD }, user.jwt);
      expect(res.statusCode, res.body).toBe(204);
      for (const token of [user.jwt, other, apiToken, appToken]) expectInvalidToken(await me(t, token));
      expect(await eventsSince(t, before)).toEqual([{ type: 'user.deleted', data: { user_id: user.id } }]);
      const { db } = t.services.database;
      for (const table of ['sessions', 'apps', 'tokens'] as const) {
        expect(await db.selectFrom(table).select('id').where('user_id', '=', user.id).execute()).toEqual([]);
      }
      expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD }), 401, 'invalid_credentials');
      const again = await signup(t, { email: user.email, username: user.username });
      expect(again.id).not.toBe(user.id);
      // The old user token names the old id: it never becomes the new account's.
      expectInvalidToken(await me(t, user.jwt));
    });

    it('401 invalid_credentials for a wrong password; nothing is deleted', async () => {
      const { user, apiToken, appToken, other } = await richUser();
      expectProblem(await json(t, 'DELETE', '/api/me', { password: 'not the password at all' }, user.jwt), 401, 'invalid_credentials');
      for (const token of [user.jwt, other, apiToken, appToken]) expect((await me(t, token)).statusCode).toBe(200);
    });

    it.each([
      ['no body', undefined],
      ['an empty object', {}],
      ['an unknown field', { password: PASSWORD, force: true }],
    ])('400 for %s; nothing is deleted', async (_name, body) => {
      const user = await signup(t);
      const res = await json(t, 'DELETE', '/api/me', body, user.jwt);
      expect(res.statusCode).toBe(400);
      expect((await me(t, user.jwt)).statusCode).toBe(200);
    });
  });

  describe('who may call them', () => {
    it('API tokens (even with every scope) and app tokens get 403 insufficient_scope naming a user token; no token 401', async () => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const sessionId = (await sessionsOf(t, user.jwt)).find((s) => !s.current)?.id ?? '';
      const apiToken = (await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] })).token;
      const appToken = (await registerApp(t, user.jwt)).token;
      const calls: Array<['GET' | 'POST' | 'DELETE', string, unknown]> = [
        ['POST', '/api/auth/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }],
        ['GET', '/api/auth/sessions', undefined],
        ['DELETE', `/api/auth/sessions/${sessionId}`, undefined],
        ['DELETE', '/api/auth/sessions', undefined],
        ['DELETE', '/api/me', { password: PASSWORD }],
      ];
      for (const [method, url, body] of calls) {
        for (const token of [apiToken, appToken]) expectInsufficientScope(await json(t, method, url, body, token), '*');
        expectProblem(await json(t, method, url, body), 401, 'unauthorized');
      }
      // Nothing happened: every credential still works, the password is unchanged.
      for (const token of [user.jwt, other, apiToken, appToken]) expect((await me(t, token)).statusCode).toBe(200);
      await login(t, user.email);
    });
  });
});

describe('login after the hashing parameters were raised', () => {
  it('upgrades the hash, opens the session, and a password change still holds', async () => {
    const shared = tempDir();
    const before = await startTestApp({ dir: shared.dir });
    const user = await signup(before);
    await before.close();
    const after = await startTestApp({ dir: shared.dir, env: { ARGON2_TIME_COST: '3' } });
    try {
      const stored = async () =>
        (await after.services.database.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow()).password_hash;
      expect(await stored()).toContain('t=2');
      const jwt = await login(after, user.email);
      expect(await stored()).toContain('t=3');
      expect((await me(after, jwt)).statusCode).toBe(200);
      expect((await json(after, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }, jwt)).statusCode).toBe(204);
      await login(after, user.email, NEW_PASSWORD);
    } finally {
      await after.close();
      shared.remove();
    }
  });
});
