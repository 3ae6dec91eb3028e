import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueMail, MAIL_TEMPLATES } from '../../src/mail/outbox.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const HOSTILE = 'eve\r\nBcc: loot@evil.example\r\nX-Injected: 1\r\n\r\n<script>alert(1)</script>';

/** Contract §11.3: no header takes user input but the stored recipient; every value escaped in HTML. Read back as a mail client reads it. */
describe('mail header injection and HTML escaping, through a real SMTP server', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  const clock = new TestClock(Date.now());

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@auth.example.com', PUBLIC_URL: 'https://auth.example.com' }, clock });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('keeps CR/LF and HTML of every interpolated value out of the headers and escaped in the HTML part, for every template', async () => {
    const data = { username: HOSTILE, new_email: HOSTILE, token_name: HOSTILE, token_prefix: HOSTILE, factor_name: HOSTILE, locked_until: HOSTILE, recovery_codes_remaining: HOSTILE };
    const purposes = { verify_email: 'verify_email', reset_password: 'reset_password', confirm_email_change: 'change_email' } as const;
    for (const template of MAIL_TEMPLATES) {
      const linkPurpose = template in purposes ? purposes[template as keyof typeof purposes] : undefined;
      await enqueueMail(t.services.database.db, { userId: null, recipient: 'ada@example.com', template, data, ...(linkPurpose ? { linkPurpose } : {}) }, clock.now());
    }
    await t.services.mailDelivery?.runOnce();
    // Link mails without a user have no link to mint: dropped. The notices arrive.
    expect(smtp.messages.length).toBe(MAIL_TEMPLATES.filter((template) => !(template in purposes)).length);
    for (const mail of smtp.messages) {
      expect(mail.envelope.to).toEqual(['ada@example.com']);
      expect(mail.to).toEqual(['ada@example.com']);
      expect(mail.headers.has('bcc')).toBe(false);
      expect(mail.headers.has('x-injected')).toBe(false);
      expect(mail.rawHeaders).not.toMatch(/evil|script/i);
      expect(mail.html).not.toContain('<script>');
      expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(mail.text).not.toMatch(/[\r\n]Bcc:/);
    }
  });

  it('refuses to queue a recipient that could name a second address or break a header', async () => {
    for (const recipient of ['ada@example.com\r\nBcc: loot@evil.example', 'ada@example.com,loot@evil.example', 'Ada <loot@evil.example>', 'loot@evil.example (ada@example.com)']) {
      await expect(enqueueMail(t.services.database.db, { userId: null, recipient, template: 'password_changed', data: {} }, clock.now())).rejects.toThrow(/plain mailbox/);
    }
  });
});
