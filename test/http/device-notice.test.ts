import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { approve, requestDevice } from '../helpers/device.js';
import { deliver, startMailApp, verifiedUser } from '../helpers/email.js';
import type { TestSmtpServer } from '../helpers/smtp.js';

/** Contract §11.5: "a device approved" is a security notice; §13.6: the webhook `device.approved`. */
describe('a device login approved', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    ({ t, smtp } = await startMailApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('mails the approver a notice naming the client, the device and the address, never a code or token', async () => {
    const user = await verifiedUser(t, smtp);
    const codes = await requestDevice(t, { device_name: 'ada-laptop' });
    const seen = smtp.messages.length;
    await approve(t, user.jwt, codes.user_code);
    const mails = await deliver(t, smtp, seen);
    expect(mails.map((m) => m.envelope.to)).toEqual([[user.email]]);
    const [mail] = mails;
    expect(mail?.subject).toBe('A device was given access to your account');
    expect(mail?.text).toContain('rz CLI');
    expect(mail?.text).toContain('ada-laptop');
    expect(mail?.text).toContain('127.0.0.1');
    for (const secret of [codes.user_code, codes.device_code]) expect(mail?.text).not.toContain(secret);
  });

  it('a webhook of the approver subscribed to device.approved receives it', async () => {
    const user = await verifiedUser(t, smtp);
    const hook = await json(t, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['device.approved'] }, user.jwt);
    expect(hook.statusCode, hook.body).toBe(201);
    const codes = await requestDevice(t);
    await approve(t, user.jwt, codes.user_code);
    await t.services.webhookDelivery.runOnce().catch(() => undefined);
    const rows = await t.services.database.db.selectFrom('webhook_deliveries').select(['event_type', 'payload']).where('endpoint_id', '=', (hook.json() as { id: string }).id).execute();
    expect(rows.map((r) => r.event_type)).toEqual(['device.approved']);
    expect(rows[0]?.payload).not.toContain(codes.device_code);
  });
});

describe('EMAIL_VERIFICATION_REQUIRED', () => {
  it('an unproven email cannot approve a device login: 403 email_unverified, as for every route that mints a token', async () => {
    const { t, smtp } = await startMailApp({ env: { EMAIL_VERIFICATION_REQUIRED: 'true' } });
    try {
      const user = await signup(t);
      const codes = await requestDevice(t);
      const res = await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt);
      expect(res.statusCode).toBe(403);
      expect((res.json() as { code: string }).code).toBe('email_unverified');
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
