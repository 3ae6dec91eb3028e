import { expect } from 'vitest';
import { json, signup, type TestUser } from './api.js';
import type { TestApp } from './app.js';
import { startTestApp } from './app.js';
import type { Clock } from '../../src/clock.js';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from './smtp.js';

export const PUBLIC_URL = 'https://auth.example.com';

/** A test app with mail on, sending to an in-process SMTP server. */
export async function startMailApp(options: { env?: Record<string, string>; clock?: Clock } = {}): Promise<{ t: TestApp; smtp: TestSmtpServer }> {
  const smtp = await startSmtpServer();
  const env = { SMTP_URL: smtp.url, MAIL_FROM: '"rz-auth" <no-reply@auth.example.com>', PUBLIC_URL, ...options.env };
  const t = await startTestApp({ env, ...(options.clock ? { clock: options.clock } : {}) });
  return { t, smtp };
}

/**
 * Sends what the outbox holds (answering reset requests first, as the background does) and
 * returns the mails that arrived since `seen`.
 */
export async function deliver(t: TestApp, smtp: TestSmtpServer, seen = smtp.messages.length): Promise<ReceivedMail[]> {
  await t.services.maintenance.runOnce();
  await t.services.mailDelivery?.runOnce();
  return smtp.messages.slice(seen);
}

/** The link token of the `#<name>=` fragment link in a mail, or in the newest of `mails` that has one. */
export function linkToken(mails: ReceivedMail | readonly (ReceivedMail | undefined)[] | undefined, name: 'verify-email' | 'reset' | 'confirm-email'): string {
  const list = Array.isArray(mails) ? mails : [mails];
  const link = list.flatMap((m) => m?.links ?? []).findLast((l) => l.includes(`#${name}=`));
  if (!link) throw new Error(`no #${name}= link in the mails`);
  return decodeURIComponent(link.slice(link.indexOf('=') + 1));
}

/** Signs up and verifies the address with the signup mail's link. */
export async function verifiedUser(t: TestApp, smtp: TestSmtpServer): Promise<TestUser> {
  const seen = smtp.messages.length;
  const user = await signup(t);
  const mails = await deliver(t, smtp, seen);
  expect((await json(t, 'POST', '/api/auth/verify-email/confirm', { token: linkToken(mails, 'verify-email') })).statusCode).toBe(204);
  return user;
}
