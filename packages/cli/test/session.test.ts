import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redact } from '../src/redact.js';
import { harness, MemoryKeychain, START, type Harness } from './harness.js';
import { startStub, STUB_TOKEN, type Stub } from './stub-server.js';

/** Contract §13.8: rz logout, rz auth status, rz auth token, and --debug. */

let h: Harness;
let stub: Stub;
afterEach(async () => {
  await stub.close();
  h.cleanup();
});

async function loggedIn(options: Parameters<typeof startStub>[0] = {}, insecure = false): Promise<void> {
  stub = await startStub(options);
  h = harness({ stdin: STUB_TOKEN, ...(insecure ? { keychain: new MemoryKeychain(true) } : {}) });
  expect(await h.run('login', '--with-token', '--host', stub.origin, ...(insecure ? ['--insecure-storage'] : []))).toBe(0);
}

describe('rz logout', () => {
  it('revokes the token on the server (RFC 7009), then deletes it and its metadata here', async () => {
    await loggedIn();
    expect(await h.run('logout')).toBe(0);
    const revoke = stub.seen.find((r) => r.path === '/oauth/revoke');
    expect(Object.fromEntries(new URLSearchParams(revoke?.body))).toEqual({ token: STUB_TOKEN, client_id: 'rz-cli' });
    expect(stub.revoked).toEqual([STUB_TOKEN]);
    expect((h.keychain as MemoryKeychain).items.size).toBe(0);
    expect(JSON.parse(readFileSync(join(h.configDir, 'hosts.json'), 'utf8'))).toEqual({ hosts: {} });
    expect(h.stdout()).toContain('the token was revoked and deleted');
    expect(await h.run('auth', 'token')).toBe(2);
  });

  it('a keychain that stopped answering is reported (exit 1) and the login is kept, not silently dropped', async () => {
    await loggedIn();
    (h.keychain as MemoryKeychain).broken = true;
    expect(await h.run('logout')).toBe(1);
    expect(h.stderr()).toContain('Could not delete the token from the keychain');
    expect(JSON.parse(readFileSync(join(h.configDir, 'hosts.json'), 'utf8')).hosts[stub.origin].storage).toBe('keychain');
  });

  it('file storage: the token leaves credentials.json too', async () => {
    await loggedIn({}, true);
    expect(await h.run('logout', '--host', stub.origin)).toBe(0);
    expect(JSON.parse(readFileSync(join(h.configDir, 'credentials.json'), 'utf8'))).toEqual({ tokens: {} });
  });

  it('an unreachable server: deleted here all the same, exit 4, and the user is told the token stays live', async () => {
    await loggedIn();
    await stub.close();
    expect(await h.run('logout')).toBe(4);
    expect(h.stderr()).toContain('stays live until it expires');
    expect((h.keychain as MemoryKeychain).items.size).toBe(0);
    expect(await h.run('auth', 'token', '--host', stub.origin)).toBe(3);
  });
});

describe('rz auth status and rz auth token', () => {
  it('status shows host, user, hint, scopes, expiry and keychain storage; never the token', async () => {
    await loggedIn({ scopes: ['apps:read'] });
    expect(await h.run('auth', 'status')).toBe(0);
    const text = h.stdout().split('\n').slice(1).join('\n');
    expect(text).toContain(`${stub.origin}\n  Logged in as: ada\n  Token: rz_…${STUB_TOKEN.slice(-4)}\n  Scopes: apps:read\n  Expires: 2027-03-08 00:00 UTC\n  Stored in: keychain\n`);
    expect(h.stdout() + h.stderr()).not.toContain(STUB_TOKEN);
    expect(h.stderr()).not.toContain('warning');
  });

  it('--json, stored in a file and expiring within 7 days: both warnings, the file path', async () => {
    await loggedIn({ expiresAt: new Date(START + 3 * 86_400_000).toISOString() }, true);
    expect(await h.run('auth', 'status', '--json')).toBe(0);
    const report = JSON.parse(h.stdout().slice(h.stdout().indexOf('{')));
    expect(report).toMatchObject({ host: stub.origin, username: 'ada', storage: 'file', path: join(h.configDir, 'credentials.json') });
    expect(report.warnings).toHaveLength(2);
    expect(report.warnings.join(' ')).toMatch(/stored in a file.*expires within 7 days/);
  });

  it('an expired stored token is exit 3; not logged in is exit 3', async () => {
    await loggedIn({ expiresAt: new Date(START - 1000).toISOString() });
    expect(await h.run('auth', 'status')).toBe(3);
    expect(h.stderr()).toContain('has expired');
    expect(await h.run('auth', 'status', '--host', 'https://nowhere.example')).toBe(3);
  });

  it('auth token prints the token and nothing else on stdout', async () => {
    await loggedIn();
    const before = h.stdout().length;
    expect(await h.run('auth', 'token')).toBe(0);
    expect(h.stdout().slice(before)).toBe(`${STUB_TOKEN}\n`);
  });
});

describe('--debug', () => {
  it('shows requests and answers with Authorization and every rz_/rza_/rzd_ value and device code redacted', async () => {
    stub = await startStub();
    h = harness();
    expect(await h.run('login', '--host', stub.origin, '--debug')).toBe(0);
    expect(await h.run('logout', '--debug')).toBe(0);
    const debug = h.stderr();
    expect(debug).toContain(`debug: > GET ${stub.origin}/api/me`);
    expect(debug).toContain('debug: > authorization: [redacted]');
    expect(debug).toContain('"access_token":"rz_[redacted]"');
    expect(debug).toContain('token=rz_[redacted]');
    expect(debug).not.toContain(STUB_TOKEN);
    expect(debug).not.toContain(STUB_TOKEN.slice(3, 20));
    expect(debug).not.toContain('DEVICECODE_secret');
    expect(existsSync(h.configDir)).toBe(true);
  });

  it('redact() cuts every token shape to its prefix', () => {
    expect(redact('a rza_abc-DEF_1 b rzd_x.y rz_Q c')).toBe('a rza_[redacted] b rzd_[redacted].y rz_[redacted] c');
    expect(redact('{"device_code":"abc_DEF"} device_code=xyz&')).toBe('{"device_code":"[redacted]"} device_code=[redacted]&');
  });
});
