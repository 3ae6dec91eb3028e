import { OPERATOR_CONTEXT } from '../../src/audit/events.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectInvalidToken, expectProblem, json, login, PASSWORD, signup } from '../helpers/api.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('signup, login, logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('POST /api/auth/signup', () => {
    it('201 with a JWT and the user; email trimmed and lower-cased; no-store', async () => {
      const res = await json(t, 'POST', '/api/auth/signup', { email: '  Grace@Example.COM ', username: 'Grace_H-1', password: PASSWORD });
      expect(res.statusCode).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(body.token).toMatch(/^eyJ/);
      expect(body.user).toEqual({ id: expect.stringMatching(UUID), username: 'Grace_H-1', email: 'grace@example.com' });
      expect(Object.keys(body).sort()).toEqual(['token', 'user']);
    });

    it.each([
      ['a password shorter than 15 characters', { password: 'short pass 123' }, 'password'],
      ['a common password', { password: 'passwordpassword' }, 'password'],
      ['a password made of one repeated character', { password: 'aaaaaaaaaaaaaaaa' }, 'password'],
      ['a password over 1024 bytes', { password: 'é'.repeat(513) }, 'password'],
      ['a password equal to the email', { email: 'longname.person@example.com', password: 'longname.person@example.com' }, 'password'],
      ['a username too short', { username: 'ab' }, 'username'],
      ['a username too long', { username: 'a'.repeat(40) }, 'username'],
      ['a username with a space', { username: 'ada lovelace' }, 'username'],
      ['a username with a dot', { username: 'ada.l' }, 'username'],
      ['an email without @', { email: 'not-an-email' }, 'email'],
      ['an email without a dot in the domain', { email: 'ada@localhost' }, 'email'],
      ['an email with a space', { email: 'ada lovelace@example.com' }, 'email'],
      // Regression: invisible format characters made look-alike accounts beside the plain address.
      ['an email ending in a zero-width space', { email: 'ada@example.com\u200b' }, 'email'],
      ['an email with a zero-width joiner in its domain', { email: 'ada@exam\u200dple.com' }, 'email'],
      ['an email with a soft hyphen', { email: 'a\u00adda@example.com' }, 'email'],
      ['an email with a right-to-left override', { email: 'ada\u202e@example.com' }, 'email'],
      ['an email with a C1 control', { email: 'ada\u0085x@example.com' }, 'email'],
    ])('400 for %s', async (_name, override, field) => {
      const body = { email: `v-${Math.random().toString(36).slice(2)}@example.com`, username: `v_${Math.random().toString(36).slice(2, 10)}`, password: PASSWORD, ...override };
      const problem = expectProblem(await json(t, 'POST', '/api/auth/signup', body), 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('accepts a long Unicode passphrase and normalises it with NFKC (never truncated)', async () => {
      const password = 'ｆｕｌｌ-width pässwörd ünïcödé ✓';
      const user = await signup(t, { password });
      // NFKC folds full-width letters to ASCII: the folded form logs in too.
      await login(t, user.email, password.normalize('NFKC'));
      // A longer password sharing a prefix is a different password.
      expect((await json(t, 'POST', '/api/auth/login', { email: user.email, password: `${password}x` })).statusCode).toBe(401);
    });

    it('409 conflict for a taken email or a username taken in another case', async () => {
      const user = await signup(t);
      expectProblem(await json(t, 'POST', '/api/auth/signup', { email: user.email.toUpperCase(), username: 'someone_new', password: PASSWORD }), 409, 'conflict');
      expectProblem(
        await json(t, 'POST', '/api/auth/signup', { email: 'new-person@example.com', username: user.username.toUpperCase(), password: PASSWORD }),
        409,
        'conflict',
      );
    });
  });

  describe('an email in two Unicode forms', () => {
    // "josé" with é precomposed (U+00E9), and with e followed by a combining acute (U+0301): one
    // address, typed differently by different keyboards and systems.
    const composed = (tag: string) => `jos\u00e9-${tag}@example.com`;
    const decomposed = (tag: string) => `jose\u0301-${tag}@example.com`;

    it.each([
      ['composed, then decomposed', composed, decomposed],
      ['decomposed, then composed', decomposed, composed],
    ])('was two accounts (%s): now one, which logs in whichever form is typed', async (_order, first, second) => {
      const tag = Math.random().toString(36).slice(2, 10);
      const user = await signup(t, { email: first(tag) });
      expect(user.email).toBe(composed(tag));
      expectProblem(await json(t, 'POST', '/api/auth/signup', { email: second(tag), username: `other_${tag}`, password: PASSWORD }), 409, 'conflict');
      await login(t, first(tag));
      await login(t, second(tag));
    });
  });

  describe('POST /api/auth/login', () => {
    it('200 with a JWT and the user, no-store', async () => {
      const user = await signup(t);
      const res = await json(t, 'POST', '/api/auth/login', { email: ` ${user.email.toUpperCase()} `, password: PASSWORD });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({ token: expect.stringMatching(/^eyJ/), user: { id: user.id, username: user.username, email: user.email } });
    });

    it('401 invalid_credentials for a wrong password and for an unknown email, same body', async () => {
      const user = await signup(t);
      const wrong = expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: 'wrong password here' }), 401, 'invalid_credentials');
      const unknown = expectProblem(await json(t, 'POST', '/api/auth/login', { email: 'nobody@example.com', password: 'wrong password here' }), 401, 'invalid_credentials');
      expect({ ...wrong, request_id: '' }).toEqual({ ...unknown, request_id: '' });
    });

    it('400 when a field is missing', async () => {
      const problem = expectProblem(await json(t, 'POST', '/api/auth/login', { email: 'a@example.com' }), 400, 'validation_failed');
      expect(problem.errors).toEqual([{ field: 'password', message: 'is required' }]);
    });

    it('each login is its own session', async () => {
      const user = await signup(t);
      const a = await login(t, user.email);
      const b = await login(t, user.email);
      const sessionOf = async (jwt: string) => (await json(t, 'GET', '/api/me', undefined, jwt)).json().auth.token_id as string;
      expect(await sessionOf(a)).not.toBe(await sessionOf(b));
    });
  });

  describe('POST /api/auth/logout', () => {
    it('204, then the same JWT is 401 on the very next request; other sessions live on', async () => {
      const user = await signup(t);
      const other = await login(t, user.email);
      const res = await json(t, 'POST', '/api/auth/logout', undefined, user.jwt);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, user.jwt));
      expectInvalidToken(await json(t, 'POST', '/api/auth/logout', undefined, user.jwt));
      expect((await json(t, 'GET', '/api/me', undefined, other)).statusCode).toBe(200);
    });
  });

  describe('closed signup', () => {
    it('403 when SIGNUP_ENABLED=false; login still works', async () => {
      const closed = await startTestApp({ env: { SIGNUP_ENABLED: 'false' } });
      try {
        expectProblem(await json(closed, 'POST', '/api/auth/signup', { email: 'x@example.com', username: 'xyz', password: PASSWORD }), 403, 'forbidden');
        const user = await closed.services.users.create({ email: 'cli@example.com', username: 'cli_user', password: PASSWORD }, OPERATOR_CONTEXT);
        expect(await login(closed, user.email)).toMatch(/^eyJ/);
      } finally {
        await closed.close();
      }
    });
  });

  describe('PASSWORD_MIN_LENGTH', () => {
    it('is configurable, and refuses to go below 8', async () => {
      const lax = await startTestApp({ env: { PASSWORD_MIN_LENGTH: '10' } });
      try {
        expect((await json(lax, 'POST', '/api/auth/signup', { email: 'ten@example.com', username: 'ten', password: 'zq7!vb2#lp' })).statusCode).toBe(201);
      } finally {
        await lax.close();
      }
      await expect(startTestApp({ env: { PASSWORD_MIN_LENGTH: '7' } })).rejects.toThrow(/PASSWORD_MIN_LENGTH/);
    });
  });
});
