import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { enqueueMail } from '../../src/mail/outbox.js';
import { tempDir } from '../helpers/app.js';
import { metricsEnv } from '../helpers/metrics.js';
import { childrenOf, commandLine, deliveryChildOf, gone } from '../helpers/processes.js';
import { builtCli, runCli, type ServerProcess, spawnNode } from '../helpers/server-process.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

/**
 * MAIL_WORKER (docs/email.md): by default `serve` sends the outbox from a child process it forks
 * and supervises (`rz-auth mail deliver`), so sending costs the API's process no CPU; the child
 * never outlives the server. Real processes on one SQLite file, a real SMTP server in this one.
 */
describe('mail delivery in its own process', { timeout: 60_000 }, () => {
  const temp = tempDir();
  let smtp: TestSmtpServer;
  let env: Record<string, string>;
  let n = 0;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
  });
  afterAll(async () => {
    await smtp.close();
    temp.remove();
  });

  let path = '';
  /** Queues `count` notices into the current database. */
  const enqueue = async (count: number): Promise<string[]> => {
    const database = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await enqueueMail(database.db, { userId: null, recipient: `p${n}-${i}@example.com`, template: 'password_changed', data: { username: `u${i}` } }, Date.now()));
      return ids;
    } finally {
      await database.close();
    }
  };
  /** A fresh database (migrated) with `count` notices queued; `env` points at it. */
  const queued = async (count: number, extra: Record<string, string> = {}): Promise<string[]> => {
    path = join(temp.dir, `rz-${(n += 1)}.db`);
    env = { DATABASE_URL: `sqlite:${path}`, RATE_LIMITS: 'off', SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@auth.example.com', PUBLIC_URL: 'https://auth.example.com', ...extra };
    expect((await runCli(['migrate'], env)).code).toBe(0);
    return enqueue(count);
  };
  const serve = async (args: string[] = []) => {
    const server = await spawnNode([builtCli(), 'serve', ...args], env);
    running.push(server);
    return server;
  };
  const arrived = (ids: readonly string[]) => ids.filter((id) => smtp.messages.some((m) => m.messageId === `<${id}@auth.example.com>`));
  const until = async (done: () => boolean, timeoutMs = 20_000) => {
    for (const deadline = Date.now() + timeoutMs; !done() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    return done();
  };

  it('serve sends through one child process, whose outcomes the server scrapes; SIGTERM stops both', async () => {
    const ids = await queued(5, await metricsEnv());
    const server = await serve();
    const child = await deliveryChildOf(server.child.pid ?? 0);
    expect(child).not.toBeNull();
    expect(await until(() => arrived(ids).length === ids.length)).toBe(true);
    expect(childrenOf(server.child.pid ?? 0)).toEqual([child]);
    // Forwarded over the IPC channel about once a second.
    const scrape = async () => (await fetch(`http://${env.METRICS_ADDR}/metrics`)).text();
    let text = '';
    for (const deadline = Date.now() + 5000; !/rz_mail_deliveries_total\{outcome="success"\} 5\b/.test(text) && Date.now() < deadline; ) text = await scrape();
    expect(text).toMatch(/rz_mail_deliveries_total\{outcome="success"\} 5\b/);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(await gone(child ?? 0)).toBe(true);
  });

  it("a SIGKILLed server leaves no delivery child behind, and the restarted server's child sends", async () => {
    await queued(0);
    const first = await serve();
    const child = await deliveryChildOf(first.child.pid ?? 0);
    expect(child).not.toBeNull();
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    // The child reads its IPC channel's close as the end of its parent (test/e2e/mail-crash.test.ts: mid-send).
    expect(await gone(child ?? 0)).toBe(true);
    const ids = await enqueue(3);
    const second = await serve();
    expect(await deliveryChildOf(second.child.pid ?? 0)).not.toBeNull();
    expect(await until(() => arrived(ids).length === ids.length)).toBe(true);
  });

  it('a delivery child that dies is started again', async () => {
    await queued(0);
    const server = await serve();
    const child = await deliveryChildOf(server.child.pid ?? 0);
    process.kill(child ?? 0, 'SIGKILL');
    expect(await gone(child ?? 0)).toBe(true);
    const next = await deliveryChildOf(server.child.pid ?? 0);
    expect(next).not.toBeNull();
    expect(next).not.toBe(child);
    expect(await server.outputHas('mail delivery process exited; restarting')).toBe(true);
  });

  it('MAIL_WORKER=external: serve sends nothing, a separate `rz-auth mail deliver` does, and stops cleanly on SIGTERM', async () => {
    const ids = await queued(4, { MAIL_WORKER: 'external' });
    const server = await serve();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(arrived(ids)).toEqual([]);
    expect(childrenOf(server.child.pid ?? 0)).toEqual([]);
    const deliverer = await spawnNode([builtCli(), 'mail', 'deliver'], env, { ready: async () => arrived(ids).length === ids.length });
    running.push(deliverer);
    expect(await deliverer.stop('SIGTERM')).toBe(0);
  });

  it('serve --workers 2 runs exactly one delivery child for the group', async () => {
    const ids = await queued(3);
    const server = await serve(['--workers', '2']);
    const primary = server.child.pid ?? 0;
    const child = await deliveryChildOf(primary);
    expect(await until(() => arrived(ids).length === ids.length)).toBe(true);
    const all = new Set([primary, ...childrenOf(primary)].flatMap((pid) => [pid, ...childrenOf(pid)]));
    expect([...all].filter((pid) => commandLine(pid).includes('mail deliver'))).toEqual([child]);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(await gone(child ?? 0)).toBe(true);
  });

  it('refuses a misspelt MAIL_WORKER at start-up, and mail deliver without SMTP_URL', async () => {
    await queued(0);
    const bad = await runCli(['serve'], { ...env, MAIL_WORKER: 'child' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('configuration error: MAIL_WORKER must be one of process, inline, external, got "child"');
    const off = await runCli(['mail', 'deliver'], { DATABASE_URL: env.DATABASE_URL ?? '' });
    expect(off.code).toBe(2);
    expect(off.stderr).toContain('mail deliver needs SMTP_URL');
  });
});
