import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';

/** Contract §13.3: the device flow's clients, managed with `rz-auth clients` (real processes). */
describe('rz-auth clients', { timeout: 60_000 }, () => {
  const temp = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off' };
  beforeAll(async () => {
    expect((await runCli(['migrate'], env)).code).toBe(0);
  }, 30_000);
  afterAll(() => temp.remove());

  const lines = (stdout: string) => stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('creates, lists, disables and enables a client; the built-in rz-cli is listed first', async () => {
    const created = await runCli(['clients', 'create', '--id', 'game-cli', '--name', 'Game CLI', '--scopes', 'apps:read,tokens:read', '--default-scopes', 'apps:read', '--max-days', '30'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(lines(created.stdout)[0]).toMatchObject({ id: 'game-cli', name: 'Game CLI', scopes: ['apps:read', 'tokens:read'], default_scopes: ['apps:read'], max_days: 30, disabled: false });
    const listed = await runCli(['clients', 'list'], env);
    expect(lines(listed.stdout).map((c) => c.id)).toEqual(['rz-cli', 'game-cli']);
    expect((await runCli(['clients', 'disable', 'game-cli'], env)).stdout).toBe('disabled game-cli\n');
    expect(lines((await runCli(['clients', 'list'], env)).stdout)[1]).toMatchObject({ disabled: true });
    expect((await runCli(['clients', 'enable', 'game-cli'], env)).stdout).toBe('enabled game-cli\n');
    const audit = await runCli(['audit', 'list', '--type', 'client.disabled'], env);
    expect(lines(audit.stdout)[0]).toMatchObject({ type: 'client.disabled', actor: { type: 'operator' } });
  });

  it('refuses unknown scopes (exit 1), bad ids and unknown clients (exit 2)', async () => {
    const unknown = await runCli(['clients', 'create', '--id', 'other-cli', '--name', 'Other', '--scopes', 'no:such'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('scopes');
    expect((await runCli(['clients', 'disable', 'Not An Id'], env)).code).toBe(2);
    expect((await runCli(['clients', 'disable', 'nobody-here'], env)).code).toBe(2);
    expect((await runCli(['clients', 'disable', 'rz-cli'], env)).code).toBe(2);
  });
});
