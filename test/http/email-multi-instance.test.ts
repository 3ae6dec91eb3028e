import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, expectInvalidToken, json, login, PASSWORD, signup } from '../helpers/api.js';
import { startTestApp, tempDir, type TestApp } from '../helpers/app.js';
import { deliver, linkToken, PUBLIC_URL } from '../helpers/email.js';
import { freshPostgresDatabase, postgresAvailable, REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

/**
 * Contract §11.4: a password reset ends every session of the user "at once, on every instance", and
 * an email change every session but the requesting one. Two instances on one store, as in
 * test/http/multi-instance.test.ts; the confirmation is made on one, the sessions are used on the other.
 */
const both = (await postgresAvailable()) && (await redisAvailable());

/** Two apps in one process share no I/O: the next turn of the event loop is awaited, as the network would. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const me = async (t: TestApp, token: string) => {
  await nextTurn();
  return json(t, 'GET', '/api/me', undefined, token);
};

const BACKENDS = [
  { name: 'one SQLite file', available: true, env: async () => ({ env: {}, dir: tempDir(), drop: async () => {} }) },
  {
    name: 'PostgreSQL and Redis',
    available: both,
    env: async () => {
      const db = await freshPostgresDatabase();
      return { env: { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: uniquePrefix() }, dir: undefined, drop: db.drop };
    },
  },
];

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`confirmations on one of two instances on ${backend.name}`, () => {
    let a: TestApp;
    let b: TestApp;
    let smtp: TestSmtpServer;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      smtp = await startSmtpServer();
      const setup = await backend.env();
      cleanup = async () => {
        await setup.drop();
        setup.dir?.remove();
      };
      const env = { ...setup.env, SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@auth.example.com', PUBLIC_URL };
      a = await startTestApp({ env, ...(setup.dir ? { dir: setup.dir.dir } : {}) });
      b = await startTestApp({ env, dir: setup.dir?.dir ?? a.dir });
    });
    afterAll(async () => {
      await b.close();
      await a.close();
      await smtp.close();
      await cleanup();
    });

    it('a password reset confirmed on one ends the sessions the other had accepted; API tokens stay', async () => {
      const user = await signup(a);
      const onB = await login(b, user.email);
      const { token: apiToken } = await createApiToken(b, onB);
      expect((await me(b, onB)).statusCode).toBe(200);
      expect((await me(b, user.jwt)).statusCode).toBe(200);
      const seen = smtp.messages.length;
      expect((await json(a, 'POST', '/api/auth/password-reset', { email: user.email })).statusCode).toBe(202);
      const token = linkToken(await deliver(a, smtp, seen), 'reset');
      expect((await json(a, 'POST', '/api/auth/password-reset/confirm', { token, new_password: 'a new and much longer passphrase' })).statusCode).toBe(204);
      expectInvalidToken(await me(b, onB));
      expectInvalidToken(await me(b, user.jwt));
      expect((await me(b, apiToken)).statusCode).toBe(200);
    });

    it('an email change confirmed on one ends, on the other, every session but the one that asked', async () => {
      const user = await signup(a);
      const other = await login(b, user.email);
      expect((await me(b, other)).statusCode).toBe(200);
      const seen = smtp.messages.length;
      const wanted = `moved-${user.username}@example.com`;
      expect((await json(b, 'POST', '/api/me/email', { email: wanted, password: PASSWORD }, user.jwt)).statusCode).toBe(202);
      const mails = await deliver(a, smtp, seen);
      const token = linkToken(mails.filter((m) => m.envelope.to.includes(wanted)), 'confirm-email');
      expect((await json(a, 'POST', '/api/me/email/confirm', { token })).statusCode).toBe(204);
      expectInvalidToken(await me(b, other));
      const asker = await me(b, user.jwt);
      expect(asker.statusCode).toBe(200);
      expect(asker.json()).toMatchObject({ email: wanted, email_verified: true });
    });
  });
}
