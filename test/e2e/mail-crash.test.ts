import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { enqueueMail } from '../../src/mail/outbox.js';
import { tempDir } from '../helpers/app.js';
import { deliveryChildOf, gone } from '../helpers/processes.js';
import { runCli, spawnServer } from '../helpers/server-process.js';
import { startSmtpServer } from '../helpers/smtp.js';

/**
 * Contract §11.3: a SIGKILL loses no accepted mail. Mails are in the outbox, the server is killed
 * while the relay holds its first messages unanswered, and restarted on the same database: every
 * mail arrives, and a mail sent again keeps its Message-ID (receivers drop the repeat by it). The
 * server sends through its delivery child (MAIL_WORKER=process): the kill takes that down too, the
 * child killed with it as a machine's crash would, and a fresh one sends after the restart.
 */

const MAILS = 30;
/** SMTP_TIMEOUT_SECONDS: a lease lasts 3 x 1 s + 1 s. */
const TIMEOUT_SECONDS = 1;
/**
 * After the restart every mail is due within a lease (sent when killed), at once (never tried), or
 * at the first retry (30 s + 20 % jitter) when its held attempt timed out before the kill; the
 * worker looks every second. Room is added for a slow machine: the test asserts that delivery
 * resumes, not how fast.
 */
const RESUME_BOUND_MS = 4_000 + 36_000 + 20_000;

describe('mail delivery across a SIGKILL', () => {
  const temp = tempDir();
  const path = join(temp.dir, 'rz.db');
  afterAll(() => temp.remove());

  it('sends every accepted mail after a restart, a mail sent again under its one Message-ID', async () => {
    const smtp = await startSmtpServer();
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // Hold every message unanswered until the kill.
    smtp.answer = async () => {
      await held;
      return null;
    };
    const env = { DATABASE_URL: `sqlite:${path}`, RATE_LIMITS: 'off', SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@auth.example.com', PUBLIC_URL: 'https://auth.example.com', SMTP_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) };
    try {
      expect((await runCli(['migrate'], env)).code).toBe(0);
      const database = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
      const ids: string[] = [];
      try {
        for (let i = 0; i < MAILS; i++) ids.push(await enqueueMail(database.db, { userId: null, recipient: `r${i}@example.com`, template: 'password_changed', data: { username: `user_${i}` } }, Date.now()));
      } finally {
        await database.close();
      }

      const first = await spawnServer(env);
      const child = await deliveryChildOf(first.child.pid ?? 0);
      expect(child).not.toBeNull();
      await smtp.waitFor(1, 20_000, 'attempts');
      first.child.kill('SIGKILL');
      process.kill(child ?? 0, 'SIGKILL');
      expect(await first.exited).toBeNull();
      expect(await gone(child ?? 0)).toBe(true);
      const heldAtKill = smtp.attempts.map((m) => m.messageId);
      expect(heldAtKill.length).toBeGreaterThan(0);
      smtp.answer = () => null;
      release();

      const second = await spawnServer(env);
      try {
        expect(await deliveryChildOf(second.child.pid ?? 0)).not.toBeNull();
        const restarted = Date.now();
        const wanted = new Set(ids.map((id) => `<${id}@auth.example.com>`));
        const arrived = () => new Set(smtp.messages.map((m) => m.messageId));
        await smtp.waitFor(1, RESUME_BOUND_MS);
        for (const deadline = Date.now() + RESUME_BOUND_MS; [...wanted].some((id) => !arrived().has(id)) && Date.now() < deadline; ) {
          await smtp.waitFor(smtp.messages.length + 1, Math.max(1, deadline - Date.now())).catch(() => {});
        }
        console.info(`mail crash: ${heldAtKill.length} held at the kill, all ${MAILS} delivered ${Date.now() - restarted} ms after the restart`);
        expect([...wanted].filter((id) => !arrived().has(id))).toEqual([]);
        // Every message carries one of the outbox's Message-IDs; a mail held before the kill came again under its own.
        for (const m of smtp.attempts) expect(wanted.has(m.messageId ?? '')).toBe(true);
        for (const id of heldAtKill) expect(arrived().has(id)).toBe(true);
        expect(smtp.attempts.length).toBeGreaterThan(MAILS - 1);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      release();
      await smtp.close();
    }
  }, 120_000);
});
