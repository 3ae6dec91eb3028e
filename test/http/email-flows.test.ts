import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken, expectInvalidToken, expectProblem, json, login, PASSWORD, signup } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { deliver, linkToken, PUBLIC_URL, startMailApp, verifiedUser as verifiedUserOf } from '../helpers/email.js';
import type { TestSmtpServer } from '../helpers/smtp.js';

/** Contract §11.4 line by line, mails read back through a real SMTP server. */

const NEW_PASSWORD = 'a new and much longer passphrase';

describe('mail off (no SMTP_URL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('every route of §11 answers 404; signup works as before and GET /api/me says email_verified false', async () => {
    const user = await signup(t);
    const me = await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) });
    expect(me.json()).toMatchObject({ email: user.email, email_verified: false });
    expectProblem(await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt), 404, 'not_found');
    expectProblem(await json(t, 'POST', '/api/auth/verify-email/confirm', { token: 'rzl_x' }), 404, 'not_found');
    expectProblem(await json(t, 'POST', '/api/auth/password-reset', { email: user.email }), 404, 'not_found');
    expectProblem(await json(t, 'POST', '/api/auth/password-reset/confirm', { token: 'rzl_x', new_password: NEW_PASSWORD }), 404, 'not_found');
    expectProblem(await json(t, 'POST', '/api/me/email', { email: 'new@example.com', password: PASSWORD }, user.jwt), 404, 'not_found');
    expectProblem(await json(t, 'POST', '/api/me/email/confirm', { token: 'rzl_x' }), 404, 'not_found');
    expect(await t.services.database.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
  });
});

describe('accounts by email', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  const clock = new TestClock(Date.now());

  beforeAll(async () => {
    ({ t, smtp } = await startMailApp({ clock }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const verifiedUser = () => verifiedUserOf(t, smtp);

  describe('verification', () => {
    it('signup mails a verification link at PUBLIC_URL; using it verifies the email, once', async () => {
      const seen = smtp.messages.length;
      const user = await signup(t);
      const [mail, ...more] = await deliver(t, smtp, seen);
      expect(more).toEqual([]);
      expect(mail?.envelope.to).toEqual([user.email]);
      const token = linkToken(mail, 'verify-email');
      expect(token).toMatch(/^rzl_[A-Za-z0-9_-]{43}$/);
      expect(mail?.links.every((l) => l.startsWith(`${PUBLIC_URL}/developers#`))).toBe(true);
      const before = await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) });
      expect(before.json()).toMatchObject({ email_verified: false });
      const ok = await json(t, 'POST', '/api/auth/verify-email/confirm', { token });
      expect(ok.statusCode).toBe(204);
      expect(ok.body).toBe('');
      const after = await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) });
      expect(after.json()).toMatchObject({ email_verified: true });
      expectProblem(await json(t, 'POST', '/api/auth/verify-email/confirm', { token }), 400, 'invalid_link');
    });

    it('POST /api/auth/verify-email: 202, a new link, and the previous link dies; verified: 409', async () => {
      const seen = smtp.messages.length;
      const user = await signup(t);
      const [first] = await deliver(t, smtp, seen);
      const res = await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ status: 'accepted' });
      const [second] = await deliver(t, smtp, seen + 1);
      expectProblem(await json(t, 'POST', '/api/auth/verify-email/confirm', { token: linkToken(first, 'verify-email') }), 400, 'invalid_link');
      expect((await json(t, 'POST', '/api/auth/verify-email/confirm', { token: linkToken(second, 'verify-email') })).statusCode).toBe(204);
      expectProblem(await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt), 409, 'conflict');
    });

    it('POST /api/auth/verify-email needs a user token: API tokens 403, none 401', async () => {
      const user = await signup(t);
      const api = await createApiToken(t, user.jwt);
      expectProblem(await json(t, 'POST', '/api/auth/verify-email', undefined, api.token), 403, 'insufficient_scope');
      expectProblem(await json(t, 'POST', '/api/auth/verify-email'), 401, 'unauthorized');
    });

    it.each([['unknown', `rzl_${'A'.repeat(43)}`], ['malformed', 'not-a-token'], ['empty', '']])('a %s token: 400 invalid_link, one body', async (_what, token) => {
      const body = expectProblem(await json(t, 'POST', '/api/auth/verify-email/confirm', { token }), 400, 'invalid_link');
      expect(body.detail).toBe('This link is not valid. It may have been used already, expired, or been replaced by a newer one.');
    });
  });

  describe('password reset', () => {
    it('202 with the same body for a known and an unknown email; the known one gets a link at PUBLIC_URL', async () => {
      const user = await verifiedUser();
      const seen = smtp.messages.length;
      const known = await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const unknown = await json(t, 'POST', '/api/auth/password-reset', { email: 'nobody-at-all@example.com' });
      for (const res of [known, unknown]) {
        expect(res.statusCode).toBe(202);
        expect(res.json()).toEqual({ status: 'accepted' });
      }
      const mails = await deliver(t, smtp, seen);
      expect(mails.map((m) => m.envelope.to)).toEqual([[user.email]]);
      expect(linkToken(mails[0], 'reset')).toMatch(/^rzl_/);
    });

    it('confirm: 204, every session ends, API tokens stay, the email counts as verified, the new password logs in', async () => {
      const seen = smtp.messages.length;
      const user = await signup(t);
      const other = await login(t, user.email);
      const api = await createApiToken(t, user.jwt);
      await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const mails = await deliver(t, smtp, seen);
      const reset = mails.find((m) => m.links.some((l) => l.includes('#reset=')));
      const res = await json(t, 'POST', '/api/auth/password-reset/confirm', { token: linkToken(reset, 'reset'), new_password: NEW_PASSWORD });
      expect(res.statusCode).toBe(204);
      for (const jwt of [user.jwt, other]) expectInvalidToken(await t.inject({ method: 'GET', url: '/api/me', headers: bearer(jwt) }));
      expect((await t.inject({ method: 'GET', url: '/api/me', headers: bearer(api.token) })).statusCode).toBe(200);
      expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD }), 401, 'invalid_credentials');
      const fresh = await login(t, user.email, NEW_PASSWORD);
      expect((await t.inject({ method: 'GET', url: '/api/me', headers: bearer(fresh) })).json()).toMatchObject({ email_verified: true });
      // The notice of the reset, to the now proven address.
      const notices = await deliver(t, smtp, seen + mails.length);
      expect(notices.map((m) => m.envelope.to)).toEqual([[user.email]]);
    });

    it('a password that breaks the rules: 400 naming new_password, and the link stays usable', async () => {
      const user = await verifiedUser();
      const seen = smtp.messages.length;
      await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const token = linkToken((await deliver(t, smtp, seen))[0], 'reset');
      const body = expectProblem(await json(t, 'POST', '/api/auth/password-reset/confirm', { token, new_password: 'short' }), 400, 'validation_failed');
      expect(body.errors).toEqual([expect.objectContaining({ field: 'new_password' })]);
      expect((await json(t, 'POST', '/api/auth/password-reset/confirm', { token, new_password: NEW_PASSWORD })).statusCode).toBe(204);
    });

    it('a new request kills the previous link', async () => {
      const user = await verifiedUser();
      const seen = smtp.messages.length;
      await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const first = linkToken(await deliver(t, smtp, seen), 'reset');
      await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const second = linkToken(await deliver(t, smtp, seen), 'reset');
      expectProblem(await json(t, 'POST', '/api/auth/password-reset/confirm', { token: first, new_password: NEW_PASSWORD }), 400, 'invalid_link');
      expect((await json(t, 'POST', '/api/auth/password-reset/confirm', { token: second, new_password: NEW_PASSWORD })).statusCode).toBe(204);
    });

    it('an expired link (RESET_TOKEN_TTL_S after the mail was queued): 400 invalid_link', async () => {
      const user = await verifiedUser();
      const seen = smtp.messages.length;
      await json(t, 'POST', '/api/auth/password-reset', { email: user.email });
      const token = linkToken((await deliver(t, smtp, seen))[0], 'reset');
      clock.advance(1800_000);
      expectProblem(await json(t, 'POST', '/api/auth/password-reset/confirm', { token, new_password: NEW_PASSWORD }), 400, 'invalid_link');
    });
  });

  describe('email change', () => {
    it('wrong password: 401 invalid_credentials, nothing queued', async () => {
      const user = await verifiedUser();
      const seen = smtp.messages.length;
      expectProblem(await json(t, 'POST', '/api/me/email', { email: 'elsewhere@example.com', password: 'not the password at all' }, user.jwt), 401, 'invalid_credentials');
      expect(await deliver(t, smtp, seen)).toEqual([]);
    });

    it('202: a link to the new address, a notice to the old; confirm: 204, changed and verified, every other session ended', async () => {
      const user = await verifiedUser();
      const other = await login(t, user.email);
      const target = `moved-${user.username}@example.org`;
      const seen = smtp.messages.length;
      const res = await json(t, 'POST', '/api/me/email', { email: target, password: PASSWORD }, user.jwt);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ status: 'accepted' });
      const mails = await deliver(t, smtp, seen);
      expect(mails.map((m) => m.envelope.to).sort()).toEqual([[target], [user.email]].sort());
      const confirmation = mails.find((m) => m.envelope.to[0] === target);
      const notice = mails.find((m) => m.envelope.to[0] === user.email);
      expect(notice?.links.some((l) => l.includes('#confirm-email='))).toBe(false);
      expect((await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) })).json()).toMatchObject({ email: user.email });
      expect((await json(t, 'POST', '/api/me/email/confirm', { token: linkToken(confirmation, 'confirm-email') })).statusCode).toBe(204);
      expect((await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) })).json()).toMatchObject({ email: target, email_verified: true });
      expectInvalidToken(await t.inject({ method: 'GET', url: '/api/me', headers: bearer(other) }));
      expect((await login(t, target)).length).toBeGreaterThan(0);
      const completed = await deliver(t, smtp, seen + mails.length);
      expect(completed.map((m) => m.envelope.to)).toEqual([[user.email]]);
    });

    it('a taken address: 202 all the same, 409 conflict at confirmation', async () => {
      const user = await verifiedUser();
      const taken = await signup(t);
      const seen = smtp.messages.length;
      expect((await json(t, 'POST', '/api/me/email', { email: taken.email, password: PASSWORD }, user.jwt)).statusCode).toBe(202);
      const confirmation = (await deliver(t, smtp, seen)).filter((m) => m.envelope.to[0] === taken.email);
      expectProblem(await json(t, 'POST', '/api/me/email/confirm', { token: linkToken(confirmation, 'confirm-email') }), 409, 'conflict');
    });

    it.each(['a,b@example.com', 'a<b@example.com', '"a"@example.com', 'a@example.com>'])('a new address that is not one plain mailbox (%j): 400 naming email', async (email) => {
      const user = await verifiedUser();
      const body = expectProblem(await json(t, 'POST', '/api/me/email', { email, password: PASSWORD }, user.jwt), 400, 'validation_failed');
      expect(body.errors).toEqual([expect.objectContaining({ field: 'email' })]);
    });
  });
});

describe('EMAIL_VERIFICATION_REQUIRED=true', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    ({ t, smtp } = await startMailApp({ env: { EMAIL_VERIFICATION_REQUIRED: 'true' } }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('every token-minting route answers 403 email_unverified until the email is verified; login and GET /api/me work', async () => {
    const seen = smtp.messages.length;
    const user = await signup(t);
    expect((await t.inject({ method: 'GET', url: '/api/me', headers: bearer(user.jwt) })).statusCode).toBe(200);
    expectProblem(await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt), 403, 'email_unverified');
    expectProblem(await json(t, 'POST', '/api/apps', { name: 'game' }, user.jwt), 403, 'email_unverified');
    const [mail] = await deliver(t, smtp, seen);
    expect((await json(t, 'POST', '/api/auth/verify-email/confirm', { token: linkToken(mail, 'verify-email') })).statusCode).toBe(204);
    const token = await createApiToken(t, user.jwt, { scopes: ['apps:write'] });
    const app = await json(t, 'POST', '/api/apps', { name: 'game' }, token.token);
    expect(app.statusCode).toBe(201);
    expect((await json(t, 'POST', `/api/apps/${(app.json() as { id: string }).id}/tokens`, {}, user.jwt)).statusCode).toBe(201);
    expect((await json(t, 'POST', `/api/tokens/${token.id}/rotate`, {}, user.jwt)).statusCode).toBe(201);
  });

  it('an API token of an unverified user cannot register an app, issue an app token or rotate', async () => {
    const user = await signup(t);
    // Minted before the setting was on: the owner's email is what counts.
    const { db } = t.services.database;
    await db.updateTable('users').set({ email_verified_at: new Date().toISOString() }).where('id', '=', user.id).execute();
    t.services.authenticator.forget({ kind: 'reset' } as never);
    const api = await createApiToken(t, user.jwt, { scopes: ['apps:write'] });
    const app = (await json(t, 'POST', '/api/apps', { name: 'game' }, api.token)).json() as { id: string };
    await db.updateTable('users').set({ email_verified_at: null }).where('id', '=', user.id).execute();
    t.services.authenticator.forget({ kind: 'reset' } as never);
    expectProblem(await json(t, 'POST', '/api/apps', { name: 'other' }, api.token), 403, 'email_unverified');
    expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, {}, api.token), 403, 'email_unverified');
    expectProblem(await json(t, 'POST', `/api/tokens/${api.id}/rotate`, {}, user.jwt), 403, 'email_unverified');
  });
});
