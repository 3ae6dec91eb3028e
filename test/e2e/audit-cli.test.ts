import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';

/** Contract §9: `rz-auth audit list` shows everyone's events to the operator, as JSON lines (a real process). */
describe('rz-auth audit list', { timeout: 60_000 }, () => {
  const temp = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off' };
  afterAll(() => temp.remove());

  const list = async (...args: string[]) => {
    const result = await runCli(['audit', 'list', ...args], env);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout === '' ? [] : result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it("records the operator's own acts and prints everyone's events newest first, filtered by user, type, time and count", async () => {
    // Only serve and migrate create the database; every other command refuses a file that is not there.
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const user = await runCli(['users', 'create', '--email', 'ops@example.com', '--username', 'ops_user'], env, 'correct horse battery staple\n');
    expect(user.code, user.stderr).toBe(0);
    const userId = (JSON.parse(user.stdout) as { id: string }).id;
    const service = JSON.parse((await runCli(['services', 'create', 'scoreboard'], env)).stdout) as { id: string; token: string };
    expect((await runCli(['services', 'revoke', service.id], env)).code).toBe(0);
    expect((await runCli(['keys', 'rotate'], env)).code).toBe(0);

    const all = await list();
    expect(all.map((e) => e.type)).toEqual(['keys.rotated', 'service_credential.revoked', 'service_credential.created', 'user.created', 'keys.rotated']);
    expect(all[0]).toMatchObject({ actor: { type: 'operator', id: null }, ip: null, request_id: null, user_id: null, details: { immediate: false } });
    // The first key of a fresh database is the service's own doing.
    expect(all.at(-1)).toMatchObject({ actor: { type: 'system', id: null } });
    expect(all[3]).toMatchObject({ actor: { type: 'operator' }, subject: { type: 'user', id: userId }, user_id: userId });
    expect(JSON.stringify(all)).not.toContain(service.token);

    expect((await list('--user', userId)).map((e) => e.type)).toEqual(['user.created']);
    expect((await list('--type', 'service_credential.created')).map((e) => e.subject)).toEqual([{ type: 'service_credential', id: service.id }]);
    expect((await list('--limit', '2')).map((e) => e.type)).toEqual(['keys.rotated', 'service_credential.revoked']);
    const now = new Date().toISOString();
    expect(await list('--since', now)).toEqual([]);
    expect((await list('--until', now)).length).toBe(5);
  });

  it('refuses bad filters with a message naming them, exit code 2', async () => {
    for (const [args, named] of [
      [['--type', 'token.stolen'], '--type'],
      [['--user', 'ada'], '--user'],
      [['--since', 'yesterday'], '--since'],
      [['--limit', '0'], '--limit'],
      // Regression: these were taken: a day rolled over into the next month, an exponent, a local
      // time whose zone is the machine's, and a repeated filter of which only the last counted.
      [['--since', '2026-02-30'], '--since'],
      [['--until', '2026-11-21T09:30:00'], '--until'],
      [['--limit', '1e3'], '--limit'],
      [['--type', 'user.created', '--type', 'keys.rotated'], '--type'],
    ] as const) {
      const result = await runCli(['audit', 'list', ...args], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(named);
    }
  });
});
