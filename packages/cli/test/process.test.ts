import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEYCHAIN_ACCOUNT, keychainService, loadNapiKeychain } from '../src/keychain.js';
import { harness } from './harness.js';
import { startStub, STUB_TOKEN, type Stub } from './stub-server.js';
import { madeFrom, PARENT } from './token-fixtures.js';

/** The built binary as a user runs it: real process, real signals, the real keychain binding. */

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(PACKAGE, 'dist', 'main.js');

beforeAll(() => {
  const newest = (dir: string): number => Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
  if (!existsSync(MAIN) || newest(join(PACKAGE, 'src')) > statSync(MAIN).mtimeMs) {
    execFileSync(process.execPath, [join(PACKAGE, '../../node_modules/typescript/bin/tsc'), '-p', join(PACKAGE, 'tsconfig.build.json')]);
  }
}, 120_000);

let stub: Stub | undefined;
let home: string;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  rmSync(home, { recursive: true, force: true });
});

interface Result { code: number | null; stdout: string; stderr: string }

/** Runs `rz` asynchronously (the stub answers from this process) with a clean environment. */
function rz(args: string[], options: { env?: Record<string, string>; input?: string; onStderr?: (text: string, child: ReturnType<typeof spawn>) => void } = {}): Promise<Result> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); options.onStderr?.(stderr, child); });
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const freshHome = () => { home = mkdtempSync(join(tmpdir(), 'rz-proc-')); };

describe('rz as a child process', () => {
  it('a token on argv is a usage error (exit 2) and is not echoed; --version prints the version', async () => {
    freshHome();
    const refused = await rz(['login', '--token', STUB_TOKEN]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('never read from the command line');
    expect(refused.stderr + refused.stdout).not.toContain(STUB_TOKEN);
    const version = await rz(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });

  it('with-token from stdin, RZ_TOKEN override, logout revokes, a 0644 file refused: the life of a stored token', async () => {
    freshHome();
    stub = await startStub();
    const env = { RZ_HOST: stub.origin, RZ_INSECURE_STORAGE: '1' };
    const login = await rz(['login', '--with-token', '--debug'], { env, input: `${STUB_TOKEN}\n` });
    expect(login.code).toBe(0);
    expect(login.stdout).toBe(`Logged in to ${stub.origin} as ada (token expires 2027-03-08 00:00 UTC)\n`);
    expect(login.stderr).toContain('authorization: [redacted]');
    expect(login.stderr).not.toContain(STUB_TOKEN);
    expect(await rz(['auth', 'token'], { env })).toEqual({ code: 0, stdout: `${STUB_TOKEN}\n`, stderr: '' });
    expect((await rz(['auth', 'token'], { env: { ...env, RZ_TOKEN: 'rz_fromenv' } })).stdout).toBe('rz_fromenv\n');
    const status = await rz(['auth', 'status', '--json'], { env });
    // Where the login put it depends on whether a keychain answered it (see the keyring test below).
    const storage = JSON.parse(status.stdout).storage as string;
    expect(['keychain', 'file']).toContain(storage);
    expect(existsSync(join(home, 'config', 'rz', 'credentials.json'))).toBe(storage === 'file');
    const logout = await rz(['logout'], { env });
    expect(logout.code).toBe(0);
    expect(stub.revoked).toEqual([STUB_TOKEN]);
    expect((await rz(['auth', 'token'], { env })).code).toBe(3);
    // A credentials file others can read is refused, whichever store the login above used.
    const credentials = join(home, 'config', 'rz', 'credentials.json');
    writeFileSync(credentials, JSON.stringify({ tokens: { 'https://auth.example.com': STUB_TOKEN } }), { mode: 0o644 });
    chmodSync(credentials, 0o644);
    const refused = await rz(['auth', 'token', '--host', 'auth.example.com']);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain(`Permissions 0644 for '${credentials}' are too open`);
    expect(refused.stderr).toContain(`chmod 600 '${credentials}'`);
  });

  it('device login end to end with real timers, and Ctrl-C while waiting stops with nothing stored', async () => {
    freshHome();
    stub = await startStub({ interval: 1 });
    const env = { RZ_INSECURE_STORAGE: '1' };
    const ok = await rz(['login', '--host', stub.origin, '--no-browser'], { env });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('WDJB-MJHT');
    // Leaves no item behind in a real keychain.
    expect((await rz(['logout', '--host', stub.origin], { env })).code).toBe(0);
    await stub.close();
    rmSync(home, { recursive: true, force: true });
    freshHome();
    stub = await startStub({ interval: 1, poll: () => 'authorization_pending' });
    const running = stub;
    let sent = false;
    const stopped = await rz(['login', '--host', stub.origin, '--no-browser'], {
      env,
      onStderr: (text, child) => {
        if (!sent && text.includes('Waiting for approval')) {
          sent = true;
          const timer = setInterval(() => { if (running.polls() >= 1) { clearInterval(timer); child.kill('SIGINT'); } }, 20);
        }
      },
    });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('Stopped; nothing was stored.');
    expect(existsSync(join(home, 'config', 'rz'))).toBe(false);
  });
});

describe('rz token as a child process', () => {
  it('derive from RZ_TOKEN | attenuate | inspect --json: tokens on stdout only, exit codes 0, 2 and 1', async () => {
    freshHome();
    const derived = await rz(['token', 'derive', '--ttl', '15m', '--scopes', 'games:publish', '--aud', 'publishing-api,scoreboard', '--label', 'ci run 7', '--debug'], { env: { RZ_TOKEN: PARENT } });
    expect(derived.code).toBe(0);
    expect(derived.stdout).toMatch(/^rzd_[A-Za-z0-9_-]+\n$/);
    const child = derived.stdout.trimEnd();
    expect(madeFrom(child, PARENT)).toBe(true);
    expect(derived.stderr).toContain('debug: child ');
    expect(derived.stderr).not.toContain(PARENT.slice(3));
    const narrower = await rz(['token', 'attenuate', '--ttl', '60', '--aud', 'scoreboard'], { input: derived.stdout });
    expect(narrower).toMatchObject({ code: 0, stderr: '' });
    const inspected = await rz(['token', 'inspect', '--json'], { input: narrower.stdout });
    expect(inspected.code).toBe(0);
    const report = JSON.parse(inspected.stdout);
    expect(report).toMatchObject({ verified: false, scopes: ['games:publish'], aud: ['scoreboard'], labels: ['ci run 7'] });
    expect(report.caveats).toHaveLength(7);
    const onArgv = await rz(['token', 'attenuate', '--ttl', '60', child]);
    expect(onArgv.code).toBe(2);
    expect(onArgv.stdout + onArgv.stderr).not.toContain(child.slice(4, 40));
    const malformed = await rz(['token', 'derive', '--stdin', '--ttl', '15m'], { input: `${PARENT}x` });
    expect(malformed).toMatchObject({ code: 1, stdout: '' });
    expect(malformed.stderr).not.toContain(PARENT.slice(3));
  });
});

describe('the real @napi-rs/keyring binding', () => {
  // Whether the machine has a store is not the test's to decide: a Linux kernel keyring can refuse a
  // first access and admit the next one. So the login itself says which case this is, and each case
  // is held to its rule: refused before any request with nothing written, or the token in the
  // keychain and never in a file.
  it('login refuses before any request and writes nothing where no store answers; where one does, the token goes there and not to a file', async () => {
    freshHome();
    const keychain = await loadNapiKeychain();
    stub = await startStub();
    const h = harness({ keychain, stdin: STUB_TOKEN });
    const code = await h.run('login', '--with-token', '--host', stub.origin);
    if (code === 0) {
      expect(await keychain?.get(keychainService(stub.origin), KEYCHAIN_ACCOUNT)).toBe(STUB_TOKEN);
      expect(existsSync(join(h.configDir, 'credentials.json'))).toBe(false);
      expect(await keychain?.delete(keychainService(stub.origin), KEYCHAIN_ACCOUNT)).toBe(true);
    } else {
      expect(code).toBe(1);
      expect(h.stderr()).toMatch(/No working keychain to store the token in \((Couldn't access platform storage|Platform failure)/);
      expect(stub.seen).toHaveLength(0);
      expect(existsSync(h.configDir)).toBe(false);
    }
    h.cleanup();
  });
});
