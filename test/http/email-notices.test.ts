import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, expectProblem, json, PASSWORD, signup } from '../helpers/api.js';
import type { TestApp } from '../helpers/app.js';
import { deliver, startMailApp, verifiedUser as verifiedUserOf } from '../helpers/email.js';
import type { TestSmtpServer } from '../helpers/smtp.js';

/** Contract §11.5 (notices) and the limits of §11.4. */
describe('security notices and limits', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    ({ t, smtp } = await startMailApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_SIGNUP_ADDRESS: '1000/3600', RATE_LIMIT_SIGNUP_EMAIL: '1000/3600' } }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const verifiedUser = () => verifiedUserOf(t, smtp);

  it('a password change mails a notice to the proven address, with no link that acts', async () => {
    const user = await verifiedUser();
    const seen = smtp.messages.length;
    expect((await json(t, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: 'a new and much longer passphrase' }, user.jwt)).statusCode).toBe(204);
    const mails = await deliver(t, smtp, seen);
    expect(mails.map((m) => m.envelope.to)).toEqual([[user.email]]);
    expect(mails[0]?.links.some((l) => l.includes('#'))).toBe(false);
  });

  it('no notice to an address nobody proved', async () => {
    const user = await signup(t);
    await deliver(t, smtp);
    const seen = smtp.messages.length;
    expect((await json(t, 'POST', '/api/auth/password', { current_password: PASSWORD, new_password: 'a new and much longer passphrase' }, user.jwt)).statusCode).toBe(204);
    expect(await deliver(t, smtp, seen)).toEqual([]);
  });

  it('a token reported leaked: the owner gets a notice naming the token, never its value', async () => {
    const user = await verifiedUser();
    const token = await createApiToken(t, user.jwt, { name: 'deploy key' });
    const seen = smtp.messages.length;
    expect((await json(t, 'POST', '/api/tokens/leaked', { tokens: [token.token] })).statusCode).toBe(202);
    const mails = await deliver(t, smtp, seen);
    expect(mails.map((m) => m.envelope.to)).toEqual([[user.email]]);
    expect(mails[0]?.text).toContain('deploy key');
    expect(`${mails[0]?.text}${mails[0]?.html}`).not.toContain(token.token.slice(3));
  });

  it('POST /api/auth/verify-email: at most 5 per user per hour (429 with Retry-After)', async () => {
    const user = await signup(t);
    for (let i = 0; i < 5; i++) expect((await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt)).statusCode).toBe(202);
    const refused = expectProblem(await json(t, 'POST', '/api/auth/verify-email', undefined, user.jwt), 429, 'rate_limited');
    expect(refused).toBeDefined();
    const other = await signup(t);
    expect((await json(t, 'POST', '/api/auth/verify-email', undefined, other.jwt)).statusCode).toBe(202);
  });

  it('password reset: limited per submitted email, alike for known and unknown emails', async () => {
    const user = await signup(t);
    for (const email of [user.email, 'nobody-limited@example.com']) {
      for (let i = 0; i < 3; i++) expect((await json(t, 'POST', '/api/auth/password-reset', { email }, undefined, `10.0.0.${i + 1}`)).statusCode).toBe(202);
      const res = await json(t, 'POST', '/api/auth/password-reset', { email }, undefined, '10.0.1.1');
      expectProblem(res, 429, 'rate_limited');
      expect(res.headers['ratelimit-policy']).toContain('"password-reset-email"');
    }
  });

  it('password reset: limited per client address', async () => {
    for (let i = 0; i < 10; i++) expect((await json(t, 'POST', '/api/auth/password-reset', { email: `n${i}@example.com` }, undefined, '10.0.2.1')).statusCode).toBe(202);
    expectProblem(await json(t, 'POST', '/api/auth/password-reset', { email: 'n10@example.com' }, undefined, '10.0.2.1'), 429, 'rate_limited');
  });
});
