import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enqueueMail, type LinkMinter, type NewMail } from '../../src/mail/outbox.js';
import { MailQueue } from '../../src/mail/queue.js';
import { smtpSender } from '../../src/mail/sender.js';
import { MAIL_WINDOW_MS, MailWorker } from '../../src/mail/worker.js';
import { json, login, signup, type TestUser } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { metricsEnv, registryOf, valueOf } from '../helpers/metrics.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

/** Contract §11.3: the outbox sent through a real SMTP server, under a test clock. */
describe('mail delivery', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let user: TestUser;
  const clock = new TestClock(Date.now());

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const env = { SMTP_URL: smtp.url, MAIL_FROM: '"rz-auth" <no-reply@auth.example.com>', PUBLIC_URL: 'https://auth.example.com', ...(await metricsEnv()) };
    t = await startTestApp({ env, clock });
    user = await signup(t);
    // The signup's verification mail (docs/email.md) goes out first, so each test sees only its own.
    await t.services.mailDelivery?.runOnce();
    smtp.messages.length = 0;
    smtp.attempts.length = 0;
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });
  afterEach(() => {
    smtp.answer = () => null;
    smtp.messages.length = 0;
    smtp.attempts.length = 0;
  });

  const delivery = () => {
    const d = t.services.mailDelivery;
    if (!d) throw new Error('mail is off');
    return d;
  };
  const notice = (o: Partial<NewMail> = {}): NewMail => ({ userId: user.id, recipient: user.email, template: 'password_changed', data: { username: user.username }, ...o });
  const enqueue = (mail: NewMail = notice()) => t.services.database.db.transaction().execute((trx) => enqueueMail(trx, mail, clock.now()));
  const row = (id: string) => t.services.database.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const counted = (outcome: string) => valueOf(registryOf(t), 'rz_mail_deliveries_total', { outcome });
  const advanceTo = async (id: string) => {
    const { next_attempt_at } = await row(id);
    if (next_attempt_at === null) throw new Error('not pending');
    clock.advance(Date.parse(next_attempt_at) - clock.now());
  };

  it('sends a multipart mail to the stored address, set as the envelope recipient, with the outbox id as its Message-ID', async () => {
    const before = await counted('success');
    const id = await enqueue();
    expect(smtp.messages).toHaveLength(0);
    await delivery().runOnce();
    const [mail] = smtp.messages;
    expect(mail?.envelope).toEqual({ from: 'no-reply@auth.example.com', to: [user.email] });
    expect(mail?.from).toEqual(['no-reply@auth.example.com']);
    expect(mail?.to).toEqual([user.email]);
    expect(mail?.messageId).toBe(`<${id}@auth.example.com>`);
    expect(mail?.subject).toBe('Your password was changed');
    expect(mail?.headers.get('content-type')?.[0]).toMatch(/^multipart\/alternative/);
    expect(mail?.headers.get('auto-submitted')).toEqual(['auto-generated']);
    expect(mail?.text).toContain(user.username);
    expect(mail?.html).toContain(user.username);
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 1, next_attempt_at: null, lease_token: null, sent_at: new Date(clock.now()).toISOString() });
    expect(await counted('success')).toBe(before + 1);
    expect(await valueOf(registryOf(t), 'rz_mail_queue_depth')).toBe(0);
  });

  it('retries a refused mail with backoff and jitter, with the same Message-ID, and sends nothing before it is due', async () => {
    smtp.answer = (_mail, n) => (n === 1 ? { code: 451, message: 'try again later' } : null);
    const failures = await counted('failure');
    const id = await enqueue();
    await delivery().runOnce();
    const failed = await row(id);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_error: expect.stringContaining('451'), lease_token: null });
    const wait = Date.parse(failed.next_attempt_at ?? '') - clock.now();
    expect(wait).toBeGreaterThanOrEqual(24_000);
    expect(wait).toBeLessThanOrEqual(36_000);
    expect(await valueOf(registryOf(t), 'rz_mail_queue_depth')).toBe(1);
    clock.advance(wait - 1);
    await delivery().runOnce();
    expect(smtp.attempts).toHaveLength(1);
    clock.advance(1);
    await delivery().runOnce();
    expect(smtp.messages.map((m) => m.messageId)).toEqual([smtp.attempts[0]?.messageId]);
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(await counted('failure')).toBe(failures + 1);
  });

  it('gives up 24 hours after the mail was queued, recording mail.failed in the user’s audit log', async () => {
    smtp.answer = () => ({ code: 451, message: 'mailbox busy' });
    const gaveUp = await counted('gave_up');
    const id = await enqueue();
    const created = clock.now();
    for (let attempts = 0; (await row(id)).status === 'pending'; attempts++) {
      expect(attempts).toBeLessThan(40);
      await advanceTo(id);
      await delivery().runOnce();
    }
    expect(clock.now() - created).toBeGreaterThanOrEqual(MAIL_WINDOW_MS);
    const last = await row(id);
    expect(last).toMatchObject({ status: 'failed', next_attempt_at: null, last_error: expect.stringContaining('mailbox busy') });
    expect(smtp.attempts).toHaveLength(Number(last.attempts));
    expect(await counted('gave_up')).toBe(gaveUp + 1);
    // A day has passed: the signup's token has expired.
    const res = await json(t, 'GET', '/api/audit?type=mail.failed', undefined, await login(t, user.email));
    expect(res.statusCode).toBe(200);
    expect((res.json() as { events: unknown[] }).events).toMatchObject([{ type: 'mail.failed', actor: { type: 'system' }, subject: { type: 'user', id: user.id }, details: { template: 'password_changed' } }]);
    clock.advance(MAIL_WINDOW_MS);
    await delivery().runOnce();
    expect(smtp.attempts).toHaveLength(Number(last.attempts));
  });

  it('gives up at once on a permanent refusal of the message (550), recording mail.failed; a 5xx is not retried for a day', async () => {
    smtp.answer = () => ({ code: 550, message: 'mailbox unavailable' });
    const gaveUp = await counted('gave_up');
    const id = await enqueue();
    await delivery().runOnce();
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null, last_error: expect.stringContaining('550') });
    expect(await counted('gave_up')).toBe(gaveUp + 1);
    clock.advance(3_600_000);
    await delivery().runOnce();
    expect(smtp.attempts).toHaveLength(1);
    const failed = await t.services.audit.list({ userId: user.id, type: 'mail.failed', limit: 10 });
    expect(failed.map((e) => e.details)).toContainEqual({ template: 'password_changed' });
  });

  it("sends a user's mails in outbox order: a later mail waits while an earlier one is retried", async () => {
    smtp.answer = (_mail, n) => (n === 1 ? { code: 421, message: 'closing' } : null);
    const first = await enqueue(notice({ template: 'password_changed' }));
    const second = await enqueue(notice({ template: 'password_reset' }));
    await delivery().runOnce();
    expect((await row(second)).status).toBe('pending');
    expect(smtp.messages).toHaveLength(0);
    await advanceTo(first);
    await delivery().runOnce();
    expect(smtp.messages.map((m) => m.messageId)).toEqual([`<${first}@auth.example.com>`, `<${second}@auth.example.com>`]);
  });

  it('mints a link mail’s token as it sends: the link is PUBLIC_URL with the token in the fragment, the outbox never holds it', async () => {
    const minted: string[] = [];
    const minter: LinkMinter = {
      mint: async (_db, mail) => {
        expect(mail).toMatchObject({ userId: user.id, purpose: 'reset_password', recipient: user.email });
        const token = `rzl_${'x'.repeat(39)}${minted.length.toString().padStart(4, '0')}`;
        minted.push(token);
        return minted.length === 1 ? token : null;
      },
    };
    const config = t.services.config.mail;
    if (!config) throw new Error('mail is off');
    const worker = new MailWorker(new MailQueue(t.services.database.db), smtpSender(config), clock, { db: t.services.database.db, publicUrl: config.publicUrl, timeoutMs: config.smtp.timeoutMs, minter, onError: (e) => expect.fail(String(e)) });
    const sent = await enqueue(notice({ template: 'reset_password', linkPurpose: 'reset_password' }));
    await worker.runOnce();
    expect(smtp.messages[0]?.links).toContain(`https://auth.example.com/developers#reset=${minted[0]}`);
    expect(smtp.messages[0]?.links.every((l) => l.startsWith('https://auth.example.com/'))).toBe(true);
    expect(JSON.stringify(await row(sent))).not.toContain(minted[0]);
    // The minter says the mail no longer deserves a link: dropped unsent.
    const dropped = await enqueue(notice({ template: 'reset_password', linkPurpose: 'reset_password' }));
    await worker.runOnce();
    expect(smtp.messages).toHaveLength(1);
    expect(await row(dropped)).toMatchObject({ status: 'superseded', attempts: 0 });
  });

  it('prunes finished mails 30 days after they finished, never a pending one', async () => {
    smtp.answer = (_mail, n) => (n === 1 ? null : { code: 451, message: 'later' });
    const sent = await enqueue(notice({ userId: null }));
    await delivery().runOnce();
    const waiting = await enqueue(notice({ userId: null, recipient: 'later@example.com' }));
    await delivery().runOnce();
    clock.advance(30 * 86_400_000 - 1);
    await t.services.maintenance.runOnce();
    expect((await row(sent)).status).toBe('sent');
    clock.advance(2);
    await t.services.maintenance.runOnce();
    const left = await t.services.database.db.selectFrom('mail_outbox').select('id').where('id', 'in', [sent, waiting]).execute();
    expect(left.map((r) => r.id)).toEqual([waiting]);
    await t.services.database.db.deleteFrom('mail_outbox').where('id', '=', waiting).execute();
  });

  it('sends each mail once when two instances run their workers at the same time', async () => {
    const other = await startTestApp({ dir: t.dir, env: { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@auth.example.com', PUBLIC_URL: 'https://auth.example.com' }, clock });
    try {
      const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => enqueue(notice({ userId: null, recipient: `r${i}@example.com` }))));
      await Promise.all([delivery().runOnce(), other.services.mailDelivery?.runOnce()]);
      expect(smtp.messages.map((m) => m.messageId).sort()).toEqual(ids.map((id) => `<${id}@auth.example.com>`).sort());
    } finally {
      await other.close();
    }
  });
});

describe('mail off (no SMTP_URL)', () => {
  it('runs no mail loop, registers no queue gauge and writes nothing to the outbox', async () => {
    const t = await startTestApp({ env: await metricsEnv() });
    try {
      expect(t.services.mail).toBeNull();
      expect(t.services.mailDelivery).toBeNull();
      await signup(t);
      expect(await t.services.database.db.selectFrom('mail_outbox').selectAll().execute()).toEqual([]);
      expect(registryOf(t).getSingleMetric('rz_mail_queue_depth')).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
