import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, json, signup } from '../helpers/api.js';
import type { TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { deliver, linkToken, startMailApp } from '../helpers/email.js';
import { addTotp, mfaEnv, verify } from '../helpers/mfa.js';
import type { TestSmtpServer } from '../helpers/smtp.js';

/** Contract §11.4: "a reset never removes or bypasses a factor" (§12 beside §11). */
describe('password reset with a second factor', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  const clock = new TestClock();
  const NEW_PASSWORD = 'a new and much longer passphrase';

  beforeAll(async () => {
    ({ t, smtp } = await startMailApp({ clock, env: mfaEnv() }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('the new password alone is not a login: the next login still asks for the authenticator app, which then completes it', async () => {
    const user = await signup(t);
    const totp = await addTotp(t, clock, user.id);
    const seen = smtp.messages.length;
    expect((await json(t, 'POST', '/api/auth/password-reset', { email: user.email })).statusCode).toBe(202);
    const token = linkToken(await deliver(t, smtp, seen), 'reset');
    expect((await json(t, 'POST', '/api/auth/password-reset/confirm', { token, new_password: NEW_PASSWORD })).statusCode).toBe(204);

    const first = expectProblem(await json(t, 'POST', '/api/auth/login', { email: user.email, password: NEW_PASSWORD }), 401, 'mfa_required');
    expect(first.methods).toContain('totp');
    const factors = await t.services.database.db.selectFrom('mfa_factors').select('id').where('user_id', '=', user.id).where('status', '=', 'active').execute();
    expect(factors).toHaveLength(1);

    clock.advance(30_000);
    const done = await verify(t, String(first.mfa_token), 'totp', totp.code());
    expect(done.statusCode, done.body).toBe(200);
  });
});
