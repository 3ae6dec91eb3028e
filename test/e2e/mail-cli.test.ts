import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { enqueueMail } from '../../src/mail/outbox.js';
import { MailQueue } from '../../src/mail/queue.js';
import { tempDir } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';

/** Contract §11.3: `rz-auth mail list [--status pending|sent|failed]` shows the outbox to the operator (a real process). */
describe('rz-auth mail list', { timeout: 60_000 }, () => {
  const temp = tempDir();
  const path = join(temp.dir, 'rz.db');
  const env = { DATABASE_URL: `sqlite:${path}`, RATE_LIMITS: 'off' };
  afterAll(() => temp.remove());

  const list = async (...args: string[]) => {
    const result = await runCli(['mail', 'list', ...args], env);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout === '' ? [] : result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it('prints recipient, template, status, attempts and last error, newest first, filtered by status; never a link', async () => {
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const database = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
    const now = Date.parse('2026-11-21T09:30:00Z');
    let ids: string[];
    try {
      const { db } = database;
      ids = [
        await enqueueMail(db, { userId: null, recipient: 'a@example.com', template: 'password_changed', data: { username: 'a' } }, now),
        await enqueueMail(db, { userId: null, recipient: 'b@example.com', template: 'reset_password', data: { username: 'b' }, linkPurpose: 'reset_password' }, now + 1),
        await enqueueMail(db, { userId: null, recipient: 'c@example.com', template: 'token_leaked', data: { username: 'c' } }, now + 2),
      ];
      const queue = new MailQueue(db);
      await queue.claimDue('2026-11-21T09:31:00.000Z', '2026-11-21T09:33:00.000Z', 'lease', 10);
      const at = '2026-11-21T09:31:00.000Z';
      await queue.recordAttempt(ids[0] ?? '', 'lease', { attemptedAt: at, status: 'sent', error: null, nextAttemptAt: null });
      await queue.recordAttempt(ids[2] ?? '', 'lease', { attemptedAt: at, status: 'failed', error: '550 5.1.1 no such mailbox', nextAttemptAt: null });
    } finally {
      await database.close();
    }
    const all = await list();
    expect(all.map((m) => m.id)).toEqual([...ids].reverse());
    expect(all[0]).toEqual({ id: ids[2], recipient: 'c@example.com', template: 'token_leaked', status: 'failed', attempts: 1, last_error: '550 5.1.1 no such mailbox', created_at: '2026-11-21T09:30:00.002Z', next_attempt_at: null, sent_at: null });
    expect(await list('--status', 'pending')).toMatchObject([{ id: ids[1], template: 'reset_password', attempts: 0, next_attempt_at: '2026-11-21T09:30:00.001Z' }]);
    expect(await list('--status', 'sent')).toMatchObject([{ id: ids[0], sent_at: '2026-11-21T09:31:00.000Z' }]);
    expect((await list('--limit', '1')).map((m) => m.id)).toEqual([ids[2]]);
    expect(JSON.stringify(all)).not.toMatch(/rzl_|#reset=/);
  });

  it('refuses a bad status or limit with a message naming it, exit code 2', async () => {
    for (const [args, named] of [
      [['--status', 'lost'], '--status'],
      [['--limit', '0'], '--limit'],
      [['--status', 'sent', '--status', 'failed'], '--status'],
    ] as const) {
      const result = await runCli(['mail', 'list', ...args], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(named);
    }
  });
});
