import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/api.js';
import { tempDir } from '../helpers/app.js';
import { freePort, request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';

/**
 * The CLI as a real process, next to a real server on the same SQLite file: what an operator does
 * to a running service (create or delete users, rotate keys) takes effect on its very next request.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

// Each CLI command is a fresh Node process: about a second each on a busy box.
describe('rz-auth CLI', { timeout: 60_000 }, () => {
  const temp = tempDir();
  // Rate limits (contract section 6) are tested elsewhere; here they would only cap the request count.
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off' };
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    server = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    temp.remove();
  });

  const url = () => server?.url ?? '';
  const me = async (token: string) => (await request(url(), 'GET', '/api/me', { token })).status;
  const jwksKids = async () => ((await request(url(), 'GET', '/.well-known/jwks.json')).body as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
  const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid;
  async function login(email: string, password = PASSWORD): Promise<{ token: string; user: { id: string } }> {
    const res = await request(url(), 'POST', '/api/auth/login', { body: { email, password } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { token: string; user: { id: string } };
  }
  const createUser = (email: string, username: string, stdin = `${PASSWORD}\n`, extra: string[] = []) =>
    runCli(['users', 'create', '--email', email, '--username', username, ...extra], env, stdin);

  describe('migrate', () => {
    const fresh = tempDir();
    afterAll(() => fresh.remove());
    it('applies the schema to a fresh file, then reports it up to date; exit 0 both times', async () => {
      const freshEnv = { DATABASE_URL: `sqlite:${join(fresh.dir, 'new.db')}` };
      const first = await runCli(['migrate'], freshEnv);
      expect(first, first.stderr).toMatchObject({ code: 0 });
      expect(first.stdout).toMatch(/^applied: 0001_initial(, \w+)*$/m);
      const again = await runCli(['migrate'], freshEnv);
      expect(again).toMatchObject({ code: 0, stdout: 'schema is up to date\n' });
    });

    it('a new database and its folder were readable by every local user under umask 022 (the signing key is inside): now 0600 and 0700', async () => {
      const folder = join(fresh.dir, 'private', 'data');
      const umask = process.umask(0o022);
      const created = await runCli(['migrate'], { DATABASE_URL: `sqlite:${join(folder, 'rz.db')}` }).finally(() => process.umask(umask));
      expect(created.code, created.stderr).toBe(0);
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      expect([mode(join(fresh.dir, 'private')), mode(folder), mode(join(folder, 'rz.db'))]).toEqual(['700', '700', '600']);
    });
  });

  describe('users create', () => {
    it('reads the password from stdin; the user logs in over HTTP to the running server', async () => {
      const created = await createUser(' Op.Erator@Example.COM ', 'operator');
      expect(created.code, created.stderr).toBe(0);
      const user = JSON.parse(created.stdout) as { id: string; email: string; username: string };
      expect(user).toEqual({ id: expect.stringMatching(UUID), email: 'op.erator@example.com', username: 'operator' });
      expect(created.stdout + created.stderr).not.toContain(PASSWORD);
      expect((await login('op.erator@example.com')).user.id).toBe(user.id);
      const list = await runCli(['users', 'list'], env);
      expect(list.code).toBe(0);
      expect(list.stdout).toContain(`${user.id}\top.erator@example.com\toperator\t`);
    });

    it('refuses a password given as a flag (it would land in shell history and ps)', async () => {
      const res = await createUser('flag@example.com', 'flag_user', '', ['--password', PASSWORD]);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/--password/);
      expect(res.stderr).not.toContain(PASSWORD);
    });

    it.each([
      ['a too-short password', 'short@example.com', 'short_pw', 'tiny pass\n', /password: must be at least 15 characters/],
      ['a common password', 'common@example.com', 'common_pw', '1qaz2wsx3edc4rfv\n', /password: is too common/],
      ['an empty stdin', 'empty@example.com', 'empty_pw', '', /password: must be at least/],
      ['an implausible email', 'not-an-email', 'bad_email', `${PASSWORD}\n`, /email: must be one plain email address/],
      ['a bad username', 'name@example.com', 'no spaces allowed', `${PASSWORD}\n`, /username: must be 3 to 39 characters/],
    ])('%s: exits 1 with a message naming the field', async (_name, email, username, stdin, message) => {
      const res = await createUser(email, username, stdin);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/^rz-auth: /);
      expect(res.stderr).toMatch(message);
    });

    it('none of the refused commands created a user', async () => {
      const list = await runCli(['users', 'list'], env);
      expect(list.code).toBe(0);
      expect(list.stdout.trim().split('\n')).toHaveLength(1);
    });

    it('a duplicate email exits 1 with a conflict message', async () => {
      const res = await createUser('OP.ERATOR@example.com', 'someone_else');
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/already exists/);
    });
  });

  describe('keys rotate while the server runs', () => {
    it('old JWTs keep working; the very next JWKS shows the new key; new logins use the new kid', async () => {
      const oldKid = (await jwksKids())[0];
      const before = (await login('op.erator@example.com')).token;
      expect(await me(before)).toBe(200);
      const rotated = await runCli(['keys', 'rotate'], env);
      expect(rotated.code, rotated.stderr).toBe(0);
      const newKid = UUID.exec(rotated.stdout)?.[0];
      expect(rotated.stdout).toBe(`new signing key ${newKid}\n`);
      expect(await jwksKids()).toEqual(expect.arrayContaining([oldKid, newKid]));
      const after = (await login('op.erator@example.com')).token;
      expect(kidOf(after)).toBe(newKid);
      expect(await me(before)).toBe(200);
      expect(await me(after)).toBe(200);
      const list = await runCli(['keys', 'list'], env);
      expect(list.stdout).toContain(`${newKid}\tsigning`);
      expect(list.stdout).toContain(`${oldKid}\tverify-only`);
    });

    it('--immediate: JWTs signed before are 401 on the very next request; only the new key is published', async () => {
      const before = (await login('op.erator@example.com')).token;
      expect(await me(before)).toBe(200);
      const rotated = await runCli(['keys', 'rotate', '--immediate'], env);
      expect(rotated.code, rotated.stderr).toBe(0);
      const newKid = UUID.exec(rotated.stdout)?.[0];
      expect(rotated.stdout).toBe(`new signing key ${newKid}; all older keys dropped\n`);
      expect(await me(before)).toBe(401);
      expect(await jwksKids()).toEqual([newKid]);
      const after = (await login('op.erator@example.com')).token;
      expect(kidOf(after)).toBe(newKid);
      expect(await me(after)).toBe(200);
    });

    it('--immediate: the very first login afterwards is signed with the new key and works', async () => {
      const rotated = await runCli(['keys', 'rotate', '--immediate'], env);
      const newKid = UUID.exec(rotated.stdout)?.[0];
      const after = (await login('op.erator@example.com')).token;
      expect(kidOf(after)).toBe(newKid);
      expect(await me(after)).toBe(200);
    });
  });

  describe('users delete while the server runs', () => {
    it("the user's API token and JWT are 401 on the very next request", async () => {
      const signup = await request(url(), 'POST', '/api/auth/signup', {
        body: { email: 'doomed@example.com', username: 'doomed', password: PASSWORD },
      });
      expect(signup.status).toBe(201);
      const { token: jwt, user } = signup.body as { token: string; user: { id: string } };
      const created = await request(url(), 'POST', '/api/tokens', { body: { name: 'ci' }, token: jwt });
      const apiToken = (created.body as { token: string }).token;
      expect(await me(apiToken)).toBe(200);
      expect(await me(jwt)).toBe(200);
      const res = await runCli(['users', 'delete', user.id], env);
      expect(res).toMatchObject({ code: 0, stdout: `deleted ${user.id}\n` });
      expect(await me(apiToken)).toBe(401);
      expect(await me(jwt)).toBe(401);
      expect((await request(url(), 'POST', '/api/auth/login', { body: { email: 'doomed@example.com', password: PASSWORD } })).status).toBe(401);
    });

    it.each([
      ['an unknown id', '00000000-0000-4000-8000-000000000000', /no user with id/],
      ['no id', undefined, /needs a user id/],
      // Regression: an id that is not one was echoed back whole, control bytes included.
      ['a 100,000-character id', 'x'.repeat(100_000), /needs a user id \(one UUID/],
      ['an id with terminal escapes', '\u001b]0;owned\u0007', /needs a user id \(one UUID/],
    ])('%s: exits 2 with a message', async (_name, id, message) => {
      const res = await runCli(['users', 'delete', ...(id ? [id] : [])], env);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(res.stderr.length).toBeLessThan(500);
      expect(res.stderr).not.toContain('\u001b');
    });

    it.each([['users', 'list'], ['keys', 'list'], ['services', 'list']])('%s %s with an argument ignored it: now exits 2', async (...command) => {
      const res = await runCli([...command, 'extra'], env);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/takes no arguments/);
    });
  });

  describe('which database', () => {
    it('a command on a SQLite file that does not exist made a new, empty one and listed nothing: now exit 2 naming the path and DATABASE_URL', async () => {
      const missing = join(temp.dir, 'elsewhere', 'rz.db');
      const res = await runCli(['users', 'list'], { ...env, DATABASE_URL: `sqlite:${missing}` });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`rz-auth: configuration error: DATABASE_URL: no database at ${missing}`);
      expect(existsSync(missing)).toBe(false);
    });

    it('a read-only command names its database on stderr and needs no Redis; one that writes still refuses without it', async () => {
      const noRedis = { ...env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
      const read = await runCli(['users', 'list'], noRedis);
      expect(read.code, read.stderr).toBe(0);
      expect(read.stderr).toBe(`rz-auth: database sqlite:${join(temp.dir, 'rz.db')}\n`);
      const write = await runCli(['services', 'create', 'needs-redis'], noRedis);
      expect(write.code).toBe(1);
      expect(write.stderr).toMatch(/Redis at REDIS_URL is not reachable/);
    });
  });

  describe('usage and configuration errors', () => {
    it.each([[['frobnicate']], [['users', 'frobnicate']]])('unknown command %j: exit 2 with the usage text', async (args) => {
      const res = await runCli(args, env);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/unknown command/);
      expect(res.stderr).toMatch(/Usage: rz-auth <command>/);
    });

    it.each([
      [['keys', 'rotate', '--bogus'], /Unknown option '--bogus'/],
      [['keys', 'rotate', 'extra'], /Unexpected argument 'extra'/],
      [['users', 'create', '--email'], /--email/],
      [['migrate', 'extra'], /migrate takes no arguments/],
      [['webhooks', 'list', 'junk'], /webhooks list takes no arguments/],
    ])('%j was exit 1 (an unknown option, a missing value) or ran anyway (a stray argument): now exit 2 naming it', async (args, message) => {
      const res = await runCli(args, env);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(message);
    });

    // Regression: each echoed the service token an operator pasted in the wrong place to stderr,
    // where it stays in the scrollback and in CI logs.
    const token = `rzs_${'Q7x'.repeat(16)}k`;
    it.each([
      [['keys', 'rotate', token], /Unexpected argument '\[REDACTED\]'/, 2],
      [['keys', 'rotate', `--${token}`], /Unknown option '--\[REDACTED\]'/, 2],
      [['keys', 'rotate', `${token.slice(0, 9)}\u00ad${token.slice(9)}`], /Unexpected argument '\[REDACTED\]'/, 2],
      [['services', 'revok', token], /unknown command "services revok \[REDACTED\]"/, 2],
      [['serve', '--workers', token], /--workers must be a number .*"\[REDACTED\]"/, 2],
    ])('%j echoed the token to stderr: now redacted', async (args, message, code) => {
      const res = await runCli(args, env);
      expect(res.code, res.stderr).toBe(code);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toContain(token.slice(4, 20));
    });

    it('help exits 0 with the usage text', async () => {
      const res = await runCli(['help'], env);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/Usage: rz-auth <command>/);
    });

    it.each([
      ['serve', { PORT: 'abc' }, 'PORT'],
      ['serve', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      ['migrate', { JWT_TTL_SECONDS: '5' }, 'JWT_TTL_SECONDS'],
      ['serve', { ARGON2_MEMORY_KIB: '1024' }, 'ARGON2_MEMORY_KIB'],
      ['migrate', { DATABASE_URL: `sqlite:${tmpdir()}` }, 'DATABASE_URL'],
    ])('%s with %j: exits 2 naming the variable', async (command, bad, variable) => {
      const res = await runCli([command], { ...env, ...bad });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^rz-auth: configuration error: /);
      expect(res.stderr).toContain(variable);
    });

    it('serve with a hop count on every interface started, believing any client that reached the port: now exit 2 naming TRUST_PROXY_HOPS_CONFIRMED', async () => {
      const res = await runCli(['serve'], { ...env, HOST: '0.0.0.0', TRUST_PROXY: '1' });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^rz-auth: configuration error: TRUST_PROXY=1 counts proxy hops/);
      expect(res.stderr).toContain('TRUST_PROXY_HOPS_CONFIRMED=true');
    });
  });
});
