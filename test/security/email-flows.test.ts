import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PasswordHasher } from '../../src/account/password-hasher.js';
import { bearer, expectInvalidToken, expectProblem, json, login, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import type { TestApp } from '../helpers/app.js';
import { deliver, linkToken, PUBLIC_URL, startMailApp } from '../helpers/email.js';
import { comparable } from '../helpers/jwt-craft.js';
import type { TestSmtpServer } from '../helpers/smtp.js';

/** The hostile list of issue 51 against the email flows (contract §11, docs/email.md). */

const NEW_PASSWORD = 'a new and much longer passphrase';
const LINK_TOKEN = /rzl_[A-Za-z0-9_-]{43}/g;

describe('email flows under attack', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  const minted = new Set<string>();
  const responses: string[] = [];

  beforeAll(async () => {
    // Limits on, high enough for the timing runs: their headers are part of what must match.
    ({ t, smtp } = await startMailApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_PASSWORD_RESET_ADDRESS: '100000/3600', RATE_LIMIT_PASSWORD_RESET_EMAIL: '100000/3600', RATE_LIMIT_ADDRESS: '100000/60', RATE_LIMIT_SIGNUP_ADDRESS: '100000/3600', RATE_LIMIT_SIGNUP_EMAIL: '100000/3600' } }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const post = async (url: string, body: unknown, token?: string) => {
    const res = await json(t, 'POST', url, body, token);
    responses.push(JSON.stringify(res.headers) + res.body);
    return res;
  };
  async function resetLink(user: TestUser, headers: Record<string, string> = {}): Promise<string> {
    const seen = smtp.messages.length;
    const res = await t.inject({ method: 'POST', url: '/api/auth/password-reset', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ email: user.email }) });
    expect(res.statusCode).toBe(202);
    const mails = await deliver(t, smtp, seen);
    for (const link of mails.flatMap((m) => m.links)) expect(link.startsWith(`${PUBLIC_URL}/developers`), link).toBe(true);
    const token = linkToken(mails, 'reset');
    minted.add(token);
    return token;
  }

  it('Host and X-Forwarded-Host set to an attacker: the link still points at PUBLIC_URL', async () => {
    const user = await signup(t);
    await resetLink(user, { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example' });
    const mail = smtp.messages.at(-1);
    expect(`${mail?.text}${mail?.html}${mail?.rawHeaders}`).not.toContain('evil.example');
  });

  it.each([
    ['a CR/LF header injection', 'ada@example.com\r\nBcc: eve@example.com'],
    ['a second address', 'ada@example.com,eve@example.com'],
    ['a route to another mailbox', 'ada<eve@example.com'],
    ['a display name', '"Ada" <eve@example.com>'],
    ['HTML', '<b>ada</b>@example.com'],
  ])('signup with %s in the email: 400 naming email, no account, no mail (regression: a,b@x and a<b@x were accepted)', async (_what, email) => {
    const seen = smtp.messages.length;
    const body = expectProblem(await json(t, 'POST', '/api/auth/signup', { email, username: `u_${Math.random().toString(36).slice(2, 10)}`, password: PASSWORD }), 400, 'validation_failed');
    expect(body.errors).toEqual([expect.objectContaining({ field: 'email' })]);
    expect(await deliver(t, smtp, seen)).toEqual([]);
  });

  it.each(['a\r\nb', '<script>', 'a b'])('a username with CR/LF, HTML or a space (%j) is refused at signup', async (username) => {
    expectProblem(await json(t, 'POST', '/api/auth/signup', { email: `x${Date.now()}@example.com`, username, password: PASSWORD }), 400, 'validation_failed');
  });

  it('an address stored before the plain-mailbox rule still logs in, and gets no mail', async () => {
    const { db } = t.services.database;
    const user = await signup(t);
    await deliver(t, smtp);
    await db.updateTable('users').set({ email: `legacy,${user.email}` }).where('id', '=', user.id).execute();
    t.services.authenticator.forget({ kind: 'reset' } as never);
    expect((await login(t, `legacy,${user.email}`)).length).toBeGreaterThan(0);
    const seen = smtp.messages.length;
    expect((await post('/api/auth/password-reset', { email: `legacy,${user.email}` })).statusCode).toBe(202);
    expect(await deliver(t, smtp, seen)).toEqual([]);
  });

  it('a reset token reused, of another purpose, or sent as a bearer token is refused', async () => {
    const user = await signup(t);
    const verify = linkToken(smtp.messages, 'verify-email');
    minted.add(verify);
    const reset = await resetLink(user);
    // Another purpose: the verification token cannot reset or change anything, nor the reset token verify.
    expectProblem(await post('/api/auth/password-reset/confirm', { token: verify, new_password: NEW_PASSWORD }), 400, 'invalid_link');
    expectProblem(await post('/api/me/email/confirm', { token: reset }), 400, 'invalid_link');
    expectProblem(await post('/api/auth/verify-email/confirm', { token: reset }), 400, 'invalid_link');
    // As a bearer token, anywhere.
    for (const url of ['/api/me', '/api/tokens', '/api/apps', '/api/auth/sessions']) expectInvalidToken(await t.inject({ method: 'GET', url, headers: bearer(reset) }));
    expectInvalidToken(await json(t, 'POST', '/api/tokens', { name: 'x' }, reset));
    expect((await post('/api/auth/password-reset/confirm', { token: reset, new_password: NEW_PASSWORD })).statusCode).toBe(204);
    expectProblem(await post('/api/auth/password-reset/confirm', { token: reset, new_password: `${NEW_PASSWORD}!` }), 400, 'invalid_link');
  });

  it('a made-up reset token costs one lookup, never a password hash: only a live link reaches argon2', async () => {
    const live = await resetLink(await signup(t));
    const hash = vi.spyOn(PasswordHasher.prototype, 'hash');
    try {
      for (const token of [`rzl_${'A'.repeat(43)}`, `rzl_${'b'.repeat(43)}`]) {
        expectProblem(await post('/api/auth/password-reset/confirm', { token, new_password: NEW_PASSWORD }), 400, 'invalid_link');
      }
      expect(hash).not.toHaveBeenCalled();
      expect((await post('/api/auth/password-reset/confirm', { token: live, new_password: NEW_PASSWORD })).statusCode).toBe(204);
      expect(hash).toHaveBeenCalledTimes(1);
    } finally {
      hash.mockRestore();
    }
  });

  it('20 parallel confirmations of one reset token: exactly one 204, the others 400 invalid_link', async () => {
    const user = await signup(t);
    const token = await resetLink(user);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post('/api/auth/password-reset/confirm', { token, new_password: `${NEW_PASSWORD} ${i}` })));
    expect(results.filter((r) => r.statusCode === 204)).toHaveLength(1);
    for (const res of results.filter((r) => r.statusCode !== 204)) expectProblem(res, 400, 'invalid_link');
  });

  it('known and unknown emails: the same status, body and headers', async () => {
    // Fresh addresses on both sides, so the per-email limit shows the same count.
    const known = await post('/api/auth/password-reset', { email: (await signup(t)).email });
    const unknown = await post('/api/auth/password-reset', { email: 'nobody-here-at-all@example.com' });
    expect(known.statusCode).toBe(202);
    expect(Object.keys(known.headers).sort()).toEqual(Object.keys(unknown.headers).sort());
    expect(comparable(known)).toEqual(comparable(unknown));
    await deliver(t, smtp);
  });

  /**
   * The request path is one insert either way (the lookup and the mail happen off it), so the
   * fastest of many alternated rounds agree: a round the scheduler or a collection interrupted
   * only ever takes longer.
   */
  it('known and unknown emails take the same time (fastest of many rounds)', async () => {
    const users = await Promise.all(Array.from({ length: 4 }, () => signup(t)));
    const ask = (email: string) => post('/api/auth/password-reset', { email });
    await ask('warm-up@example.com');
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < 300; i++) {
      for (const kind of i % 2 === 0 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const)) {
        const email = kind === 'known' ? (users[i % users.length] as TestUser).email : `ghost-${i}@example.com`;
        const start = performance.now();
        const res = await ask(email);
        times[kind].push(performance.now() - start);
        expect(res.statusCode).toBe(202);
      }
    }
    const [k, u] = [Math.min(...times.known), Math.min(...times.unknown)];
    console.info(`password reset, fastest round: known ${k.toFixed(3)} ms, unknown ${u.toFixed(3)} ms`);
    expect(Math.abs(k - u), `known ${k} ms, unknown ${u} ms`).toBeLessThan(0.2 * Math.max(k, u) + 0.05);
    await deliver(t, smtp);
  }, 60_000);

  it('no link token in any log line, audit row, outbox row or response', async () => {
    const user = await signup(t);
    await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt);
    await deliver(t, smtp);
    for (const mail of smtp.messages) for (const token of `${mail.text}${mail.html}`.match(LINK_TOKEN) ?? []) minted.add(token);
    expect(minted.size).toBeGreaterThan(3);
    const { db } = t.services.database;
    const stored = JSON.stringify([await db.selectFrom('audit_events').selectAll().execute(), await db.selectFrom('mail_outbox').selectAll().execute(), await db.selectFrom('link_tokens').selectAll().execute()]);
    const logs = (await t.settledLogs()).join('\n');
    for (const token of minted) {
      const body = token.slice(4);
      expect(stored).not.toContain(body);
      expect(logs).not.toContain(body);
      for (const response of responses) expect(response).not.toContain(body);
    }
  });
});
