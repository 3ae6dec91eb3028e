import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configDir } from '../src/files.js';
import { harness, MemoryKeychain, type Harness } from './harness.js';
import { startStub, STUB_TOKEN, type Stub } from './stub-server.js';

/** Contract §13.8 storage: where the token lives, the precedence, and the file rules. */

const HOST = 'https://auth.example.com';
const FILE_TOKEN = 'rz_' + 'F'.repeat(49);
const KEYCHAIN_TOKEN = 'rz_' + 'K'.repeat(49);
const ENV_TOKEN = 'rz_' + 'E'.repeat(49);

let h: Harness;
let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  h.cleanup();
});

function writeLogin(dir: string, mode: number, expiresAt = '2027-03-08T00:00:00.000Z'): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const record = { username: 'ada', token_id: 'tok-1', hint: 'rz_…FFFF', scopes: ['apps:read'], expires_at: expiresAt, storage: 'file' };
  writeFileSync(join(dir, 'hosts.json'), JSON.stringify({ default_host: HOST, hosts: { [HOST]: record } }), { mode: 0o600 });
  const path = join(dir, 'credentials.json');
  writeFileSync(path, JSON.stringify({ tokens: { [HOST]: FILE_TOKEN } }));
  chmodSync(path, mode);
  return path;
}

describe('reading the token', () => {
  it('a credentials file with mode 0644 (or any group/other bit) is refused, printing the chmod that fixes it', async () => {
    h = harness({ keychain: null });
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      const path = writeLogin(h.configDir, mode);
      expect(await h.run('auth', 'token')).toBe(1);
      expect(h.stderr()).toContain(`Permissions ${mode.toString(8).padStart(4, '0')} for '${path}' are too open`);
      expect(h.stderr()).toContain(`chmod 600 '${path}'`);
      expect(h.stdout()).toBe('');
    }
    chmodSync(join(h.configDir, 'credentials.json'), 0o600);
    expect(await h.run('auth', 'token')).toBe(0);
    expect(h.stdout()).toBe(`${FILE_TOKEN}\n`);
  });

  it('precedence: RZ_TOKEN, then the keychain, then the file', async () => {
    const keychain = new MemoryKeychain();
    h = harness({ keychain });
    writeLogin(h.configDir, 0o600);
    expect(await h.run('auth', 'token')).toBe(0);
    expect(h.stdout()).toBe(`${FILE_TOKEN}\n`);
    await keychain.set(`rz:${HOST}`, 'default', KEYCHAIN_TOKEN);
    expect(await h.run('auth', 'token')).toBe(0);
    expect(h.stdout()).toBe(`${FILE_TOKEN}\n${KEYCHAIN_TOKEN}\n`);
    h.cleanup();
    h = harness({ keychain, env: { RZ_TOKEN: ENV_TOKEN, RZ_HOST: HOST } });
    expect(await h.run('auth', 'token')).toBe(0);
    expect(h.stdout()).toBe(`${ENV_TOKEN}\n`);
  });

  it('a keychain item is read from service rz:<host>, account default; RZ_HOST and --host pick the host', async () => {
    const keychain = new MemoryKeychain();
    await keychain.set('rz:https://other.example.com', 'default', KEYCHAIN_TOKEN);
    h = harness({ keychain, env: { RZ_HOST: 'other.example.com' } });
    expect(await h.run('auth', 'token')).toBe(0);
    expect(await h.run('auth', 'token', '--host', HOST)).toBe(3);
    expect(h.stdout()).toBe(`${KEYCHAIN_TOKEN}\n`);
    expect(h.stderr()).toContain(`Not logged in to ${HOST}`);
  });

  it('RZ_TOKEN overrides the stored token for requests too', async () => {
    stub = await startStub();
    h = harness({ env: { RZ_TOKEN: STUB_TOKEN } });
    expect(await h.run('auth', 'token', '--host', stub.origin)).toBe(0);
    expect(h.stdout()).toBe(`${STUB_TOKEN}\n`);
    expect(existsSync(h.configDir)).toBe(false);
  });
});

describe('writing files', () => {
  it('config dir: $XDG_CONFIG_HOME/rz, ~/.config/rz when unset or relative, %APPDATA%\\rz on Windows', () => {
    expect(configDir({ env: { XDG_CONFIG_HOME: '/x/y' }, platform: 'linux', homedir: '/home/ada' })).toBe('/x/y/rz');
    expect(configDir({ env: {}, platform: 'darwin', homedir: '/Users/ada' })).toBe('/Users/ada/.config/rz');
    expect(configDir({ env: { XDG_CONFIG_HOME: 'rel' }, platform: 'linux', homedir: '/home/ada' })).toBe('/home/ada/.config/rz');
    expect(configDir({ env: { APPDATA: 'C:/Users/ada/AppData/Roaming' }, platform: 'win32', homedir: 'C:/Users/ada' })).toMatch(/Roaming[\\/]rz$/);
  });

  it('a login into an existing loose directory tightens it to 0700, files land 0600 and no temp file stays', async () => {
    stub = await startStub();
    h = harness({ stdin: STUB_TOKEN, keychain: new MemoryKeychain(true) });
    mkdirSync(h.configDir, { recursive: true, mode: 0o755 });
    chmodSync(h.configDir, 0o755);
    expect(await h.run('login', '--with-token', '--host', stub.origin, '--insecure-storage')).toBe(0);
    expect(statSync(h.configDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(h.configDir).sort()).toEqual(['credentials.json', 'hosts.json']);
    for (const file of readdirSync(h.configDir)) expect(statSync(join(h.configDir, file)).mode & 0o777).toBe(0o600);
  });

  it('a later keychain login removes the token from the file', async () => {
    stub = await startStub();
    h = harness({ stdin: STUB_TOKEN, keychain: new MemoryKeychain(true) });
    expect(await h.run('login', '--with-token', '--host', stub.origin, '--insecure-storage')).toBe(0);
    const keychain = new MemoryKeychain();
    const again = harness({ stdin: STUB_TOKEN, keychain, env: { XDG_CONFIG_HOME: join(h.configDir, '..') } });
    expect(await again.run('login', '--with-token', '--host', stub.origin)).toBe(0);
    again.cleanup();
    expect(JSON.parse(readFileSync(join(h.configDir, 'credentials.json'), 'utf8'))).toEqual({ tokens: {} });
    expect(keychain.items.get(`rz:${stub.origin}/default`)).toBe(STUB_TOKEN);
  });
});

describe('rz login --with-token', () => {
  it('reads the token from stdin, checks it with GET /api/me and stores it', async () => {
    stub = await startStub({ username: 'grace' });
    h = harness({ stdin: `  ${STUB_TOKEN}\n` });
    expect(await h.run('login', '--with-token', '--host', stub.origin)).toBe(0);
    expect(stub.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/me']);
    expect(h.stdout()).toBe(`Logged in to ${stub.origin} as grace (token expires 2027-03-08 00:00 UTC)\n`);
    expect((h.keychain as MemoryKeychain).items.get(`rz:${stub.origin}/default`)).toBe(STUB_TOKEN);
  });

  it('a token the server refuses is exit 3 and nothing is stored; empty stdin is a usage error', async () => {
    stub = await startStub();
    h = harness({ stdin: 'rz_' + 'Z'.repeat(49) });
    expect(await h.run('login', '--with-token', '--host', stub.origin)).toBe(3);
    expect(existsSync(h.configDir)).toBe(false);
    expect((h.keychain as MemoryKeychain).items.size).toBe(0);
    h.cleanup();
    h = harness({ stdin: '\n' });
    expect(await h.run('login', '--with-token', '--host', stub.origin)).toBe(2);
    expect(await h.run('login', '--with-token', '--scopes', 'a', '--host', stub.origin)).toBe(2);
  });
});
