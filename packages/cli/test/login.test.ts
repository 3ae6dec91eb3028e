import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, MemoryKeychain, type Harness } from './harness.js';
import { startStub, STUB_TOKEN, type Stub } from './stub-server.js';

/** Contract §13.8/§13.9: `rz login` by device authorization against a stub rz-auth. */

let stub: Stub;
let h: Harness;
afterEach(async () => {
  await stub.close();
  h.cleanup();
});

const polls = (s: Stub) => s.seen.filter((r) => r.path === '/oauth/token');

describe('rz login (device authorization)', () => {
  it('reads the metadata, requests a code for rz-cli, polls, checks /api/me and stores the token in the keychain', async () => {
    stub = await startStub({ scopes: ['apps:read', 'games:publish'] });
    h = harness();
    expect(await h.run('login', '--host', stub.origin, '--scopes', 'apps:read,games:publish', '--device-name', 'build box')).toBe(0);
    expect(stub.seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /.well-known/oauth-authorization-server', 'POST /oauth/device_authorization', 'POST /oauth/token', 'GET /api/me',
    ]);
    const request = new URLSearchParams(stub.seen[1]?.body);
    expect(Object.fromEntries(request)).toEqual({ client_id: 'rz-cli', device_name: 'build box', scope: 'apps:read games:publish' });
    expect(Object.fromEntries(new URLSearchParams(polls(stub)[0]?.body))).toMatchObject({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'rz-cli' });
    expect(stub.seen[3]?.headers.authorization).toBe(`Bearer ${STUB_TOKEN}`);
    for (const r of stub.seen) expect(r.headers['user-agent']).toMatch(/^rz\/\d+\.\d+\.\d+ \(linux; node \d+\)$/);
    expect(h.stdout()).toBe(`Logged in to ${stub.origin} as ada (token expires 2027-03-08 00:00 UTC)\n`);
    expect(h.stderr()).toContain('WDJB-MJHT');
    expect(h.stderr()).toContain(`${stub.origin}/device`);
    expect(h.stdout() + h.stderr()).not.toContain(STUB_TOKEN);
    expect((h.keychain as MemoryKeychain).items.get(`rz:${stub.origin}/default`)).toBe(STUB_TOKEN);
    const hosts = JSON.parse(readFileSync(join(h.configDir, 'hosts.json'), 'utf8'));
    expect(hosts.default_host).toBe(stub.origin);
    expect(hosts.hosts[stub.origin]).toEqual({
      username: 'ada', token_id: 'tok-1', hint: `rz_…${STUB_TOKEN.slice(-4)}`, scopes: ['apps:read', 'games:publish'],
      expires_at: '2027-03-08T00:00:00.000Z', storage: 'keychain',
    });
    expect(JSON.stringify(hosts)).not.toContain(STUB_TOKEN);
    expect(existsSync(join(h.configDir, 'credentials.json'))).toBe(false);
    // The first poll waits one interval (RFC 8628 §3.5).
    expect(h.waits).toEqual([5000]);
  });

  it('opens verification_uri_complete unless --no-browser, SSH_CONNECTION, CI or (on Linux) no display', async () => {
    stub = await startStub();
    const cases: [Record<string, string>, string[], boolean][] = [
      [{}, [], true],
      [{}, ['--no-browser'], false],
      [{ SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22' }, [], false],
      [{ CI: 'true' }, [], false],
      [{ DISPLAY: '' }, [], false],
    ];
    for (const [env, flags, opens] of cases) {
      h = harness({ env });
      expect(await h.run('login', '--host', stub.origin, ...flags)).toBe(0);
      expect(h.opened, JSON.stringify([env, flags])).toEqual(opens ? [`${stub.origin}/device?user_code=WDJB-MJHT`] : []);
      h.cleanup();
    }
    h = harness();
  });

  it('slow_down: a stub that demands it gets every later poll 5 s further apart, and the login then succeeds', async () => {
    let last = 0;
    let interval = 5_000;
    // A server that persists the grown interval: a poll sooner than it is slow_down again.
    stub = await startStub({
      poll: (n) => {
        const at = h.elapsed();
        const tooSoon = n === 1 || n === 2 || at - last < interval;
        last = at;
        if (tooSoon) { interval += 5_000; return 'slow_down'; }
        return 'token';
      },
    });
    h = harness();
    expect(await h.run('login', '--host', stub.origin)).toBe(0);
    expect(h.waits).toEqual([5_000, 10_000, 15_000]);
    expect(polls(stub)).toHaveLength(3);
  });

  it('stops at expires_in although the server keeps answering authorization_pending', async () => {
    stub = await startStub({ expiresIn: 30, interval: 5, poll: () => 'authorization_pending' });
    h = harness();
    expect(await h.run('login', '--host', stub.origin)).toBe(3);
    expect(h.elapsed()).toBe(30_000);
    expect(polls(stub)).toHaveLength(5);
    expect(h.stderr()).toContain('expired before it was approved');
    expect(existsSync(join(h.configDir, 'hosts.json'))).toBe(false);
  });

  it('doubles the wait while the token endpoint cannot be reached (RFC 8628 §3.5), and recovers', async () => {
    stub = await startStub();
    let failures = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/oauth/token') && failures < 3) { failures += 1; throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }); }
      return fetch(input, init);
    };
    h = harness({ fetch: flaky });
    expect(await h.run('login', '--host', stub.origin)).toBe(0);
    expect(h.waits).toEqual([5_000, 10_000, 20_000, 40_000]);
  });

  it.each([['access_denied', 3], ['expired_token', 3], ['invalid_grant', 3]] as const)('%s ends the login with exit %i and stores nothing', async (answer, code) => {
    stub = await startStub({ poll: () => answer });
    h = harness();
    expect(await h.run('login', '--host', stub.origin)).toBe(code);
    expect(existsSync(h.configDir)).toBe(false);
    expect((h.keychain as MemoryKeychain).items.size).toBe(0);
  });

  it('Ctrl-C while waiting stops cleanly: exit 1, no more polls, nothing stored', async () => {
    stub = await startStub({ poll: () => 'authorization_pending' });
    h = harness();
    h.onSleep((count) => { if (count === 3) h.interrupt.abort(new Error('interrupted')); });
    expect(await h.run('login', '--host', stub.origin)).toBe(1);
    expect(polls(stub)).toHaveLength(2);
    expect(h.stderr()).toContain('Stopped; nothing was stored.');
    expect(existsSync(h.configDir)).toBe(false);
  });

  it('an unreachable server is exit 4; a metadata document naming another issuer is refused', async () => {
    stub = await startStub({ issuer: () => 'https://evil.example' });
    h = harness();
    expect(await h.run('login', '--host', stub.origin)).toBe(1);
    expect(h.stderr()).toContain('names another issuer');
    expect(stub.seen).toHaveLength(1);
    await stub.close();
    h.cleanup();
    h = harness();
    expect(await h.run('login', '--host', stub.origin)).toBe(4);
    expect(h.stderr()).toContain('Could not reach');
  });

  it('usage errors are exit 2: a token on argv, an unknown option, plain HTTP to a remote host, no host', async () => {
    stub = await startStub();
    h = harness();
    for (const argv of [
      ['login', '--token', 'x'], ['login', '--token=x'], ['login', '--with-token', STUB_TOKEN],
      ['login', '--bogus'], ['login', '--host', 'http://auth.example.com'], ['login'], ['nonsense'],
    ]) {
      expect(await h.run(...argv), argv.join(' ')).toBe(2);
    }
    expect(h.stderr()).toContain('never read from the command line');
    expect(stub.seen).toHaveLength(0);
    expect(h.stdout() + h.stderr()).not.toContain(STUB_TOKEN);
  });
});

describe('storage at login', () => {
  it('no working keychain and no --insecure-storage: stops before any request and writes nothing', async () => {
    stub = await startStub();
    h = harness({ keychain: new MemoryKeychain(true) });
    expect(await h.run('login', '--host', stub.origin)).toBe(1);
    expect(h.stderr()).toContain('No working keychain');
    expect(h.stderr()).toContain('--insecure-storage');
    expect(stub.seen).toHaveLength(0);
    expect(existsSync(h.configDir)).toBe(false);
    h.cleanup();
    h = harness({ keychain: null });
    expect(await h.run('login', '--host', stub.origin)).toBe(1);
    expect(h.stderr()).toContain('@napi-rs/keyring is not installed');
    expect(existsSync(h.configDir)).toBe(false);
  });

  it.each([[['--insecure-storage'], {}], [[], { RZ_INSECURE_STORAGE: '1' }]])('%j %j: the token goes to credentials.json, 0600 in a 0700 directory', async (flags, env) => {
    stub = await startStub();
    h = harness({ keychain: new MemoryKeychain(true), env });
    expect(await h.run('login', '--host', stub.origin, ...flags)).toBe(0);
    expect(statSync(h.configDir).mode & 0o777).toBe(0o700);
    for (const file of ['credentials.json', 'hosts.json']) expect(statSync(join(h.configDir, file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(h.configDir, 'credentials.json'), 'utf8'))).toEqual({ tokens: { [stub.origin]: STUB_TOKEN } });
    expect(JSON.parse(readFileSync(join(h.configDir, 'hosts.json'), 'utf8')).hosts[stub.origin].storage).toBe('file');
    expect(h.stderr()).toContain('warning: no working keychain');
  });
});
