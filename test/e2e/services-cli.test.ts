import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { signupAndToken } from '../helpers/process-api.js';
import { runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';

/**
 * Contract §7, service credentials: created, listed and revoked with the CLI (real processes),
 * next to a running server on the same SQLite file; and SCOPES_FILE checked at start.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('rz-auth services', { timeout: 60_000 }, () => {
  const temp = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off' };
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    server = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    temp.remove();
  });

  const introspect = async (service: string, token: string) =>
    fetch(`${server?.url ?? ''}/api/introspect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });

  it('create prints the credential once as JSON; list shows it by hint; it introspects at once; revoke ends it on the running server', async () => {
    const created = await runCli(['services', 'create', 'scoreboard'], env);
    expect(created.code, created.stderr).toBe(0);
    const credential = JSON.parse(created.stdout) as Record<string, string>;
    expect(Object.keys(credential)).toEqual(['id', 'name', 'token', 'created_at']);
    expect(credential).toMatchObject({ id: expect.stringMatching(UUID), name: 'scoreboard', token: expect.stringMatching(/^rzs_[0-9A-Za-z]{49}$/) });
    const token = credential.token ?? '';

    const listed = await runCli(['services', 'list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`${credential.id}\tscoreboard\trzs_${token.slice(-4)}\t${credential.created_at}\n`);

    const user = await signupAndToken(server?.url ?? '');
    const active = await introspect(token, user.token);
    expect(active.status).toBe(200);
    expect(await active.json()).toMatchObject({ active: true, token_type: 'api_token', jti: user.tokenId });

    const revoked = await runCli(['services', 'revoke', credential.id ?? ''], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${credential.id}\n` });
    const refused = await introspect(token, user.token);
    expect(refused.status).toBe(401);
    expect((await refused.json()) as unknown).toMatchObject({ code: 'invalid_token' });
    expect((await runCli(['services', 'list'], env)).stdout).toBe('');
  });

  it('refuses a blank name, a second name, and an unknown or already revoked id, changing nothing', async () => {
    const blank = await runCli(['services', 'create', '  '], env);
    expect(blank.code).toBe(1);
    expect(blank.stderr).toMatch(/name: must not be empty/);
    expect((await runCli(['services', 'create', 'a', 'b'], env)).code).toBe(2);
    const unknown = await runCli(['services', 'revoke', '00000000-0000-4000-8000-000000000000'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no active service credential with id/);
    expect((await runCli(['services', 'revoke', 'not-an-id'], env)).code).toBe(2);
    expect((await runCli(['services', 'list'], env)).stdout).toBe('');
  });

  it('serve refuses to start on a bad SCOPES_FILE, naming the entry', async () => {
    const path = join(temp.dir, 'scopes.json');
    writeFileSync(path, JSON.stringify({ scopes: [{ name: 'games:publish', description: 'x' }, { name: 'apps:read', description: 'y' }] }));
    const refused = await runCli(['serve'], { ...env, PORT: '0', SCOPES_FILE: path }, '', 20_000);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`configuration error: SCOPES_FILE ${path}: scopes[1] "apps:read": is a built-in scope`);
  });
});
