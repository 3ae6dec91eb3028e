import { inspect } from '@rz-auth/token';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harness, MemoryKeychain } from './harness.js';
import { madeFrom, NOW_S, OTHER_PARENT, PARENT, printed, refused, rz } from './token-fixtures.js';

/** Contract §14.7: rz token derive, offline, from the stored token or a parent on stdin. */

const caveatsOf = (child: string) => inspect(child).caveats.map((c) => ({ [c.type]: c.value }));
const derive = (...argv: string[]) => ['token', 'derive', ...argv];

describe('rz token derive: where the parent comes from', () => {
  it('RZ_TOKEN, with no host configured: the child alone on stdout, its caveats as asked, signed by the parent', async () => {
    const child = await printed(derive('--ttl', '15m', '--scopes', 'games:publish', '--aud', 'publishing-api', '--label', 'ci run 4411', '--cidr', '10.0.0.0/8', '--rate', '60/60s'), { env: { RZ_TOKEN: PARENT } });
    expect(caveatsOf(child)).toEqual([
      { iat: NOW_S }, { exp: NOW_S + 900 }, { scopes: ['games:publish'] }, { aud: ['publishing-api'] },
      { cidrs: ['10.0.0.0/8'] }, { label: 'ci run 4411' }, { rl: { q: 60, w: 60 } },
    ]);
    expect(madeFrom(child, PARENT)).toBe(true);
  });

  it('without RZ_TOKEN: the keychain, then credentials.json, by the precedence of rz auth token', async () => {
    const keychain = new MemoryKeychain();
    keychain.items.set('rz:https://auth.example.com/default', PARENT);
    const fromKeychain = await printed(derive('--ttl', '60', '--host', 'auth.example.com'), { keychain });
    expect(madeFrom(fromKeychain, PARENT)).toBe(true);
    const overridden = await printed(derive('--ttl', '60', '--host', 'auth.example.com'), { keychain, env: { RZ_TOKEN: OTHER_PARENT } });
    expect(madeFrom(overridden, OTHER_PARENT)).toBe(true);

    const h = harness({ keychain: new MemoryKeychain(true) });
    mkdirSync(h.configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(h.configDir, 'credentials.json'), JSON.stringify({ tokens: { 'https://auth.example.com': OTHER_PARENT } }), { mode: 0o600 });
    writeFileSync(join(h.configDir, 'hosts.json'), JSON.stringify({ default_host: 'https://auth.example.com', hosts: {} }), { mode: 0o600 });
    expect(await h.run(...derive('--ttl', '60'))).toBe(0);
    expect(madeFrom(h.stdout().trimEnd(), OTHER_PARENT)).toBe(true);
    h.cleanup();
  });

  it('--stdin: the parent piped in, even when RZ_TOKEN is set', async () => {
    const child = await printed(derive('--stdin', '--ttl', '2h'), { stdin: `${OTHER_PARENT}\n`, env: { RZ_TOKEN: PARENT } });
    expect(madeFrom(child, OTHER_PARENT)).toBe(true);
    expect(await refused(derive('--stdin', '--ttl', '2h'), { stdin: ' \n' })).toMatchObject({ code: 2, stderr: expect.stringContaining('No token on stdin') });
    expect((await refused(derive('--stdin', '--host', 'auth.example.com', '--ttl', '2h'), { stdin: PARENT })).code).toBe(2);
  });

  it('not logged in and no RZ_TOKEN: exit 3; no host at all: exit 2', async () => {
    expect(await refused(derive('--ttl', '15m', '--host', 'auth.example.com'))).toMatchObject({ code: 3, stderr: expect.stringContaining('Not logged in to https://auth.example.com') });
    expect((await refused(derive('--ttl', '15m'))).code).toBe(2);
  });

  it('a token on the command line is refused (exit 2) and not echoed, as a word, an option value or --token', async () => {
    for (const argv of [derive('--ttl', '15m', PARENT), derive('--ttl', '15m', `--label=${PARENT}`), derive('--token', PARENT, '--ttl', '15m'), ['token', 'attenuate', '--ttl', '60', 'rzd_AAAA'], ['token', 'inspect', 'rzd_AAAA']]) {
      const result = await refused(argv, { env: { RZ_TOKEN: PARENT } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('A token is never read from the command line');
      expect(result.stderr).not.toContain('rzd_AAAA');
    }
  });

  it('a malformed parent exits 1 and is never echoed; a derived token as the parent points at attenuate', async () => {
    const bad = PARENT.slice(0, -1) + (PARENT.endsWith('A') ? 'B' : 'A');
    for (const options of [{ env: { RZ_TOKEN: bad } }, { env: { RZ_TOKEN: 'not a token at all' } }]) {
      const result = await refused(derive('--ttl', '15m'), options, [bad, 'not a token at all']);
      expect(result).toEqual({ code: 1, stderr: 'rz: The token in RZ_TOKEN is not an rz_ or rza_ token with a valid checksum\n' });
    }
    expect(await refused(derive('--stdin', '--ttl', '15m'), { stdin: bad }, [bad])).toEqual({ code: 1, stderr: 'rz: The token on stdin is not an rz_ or rza_ token with a valid checksum\n' });
    const child = await printed(derive('--ttl', '15m'), { env: { RZ_TOKEN: PARENT } });
    const fromChild = await refused(derive('--ttl', '1m'), { env: { RZ_TOKEN: child } }, [child]);
    expect(fromChild).toMatchObject({ code: 1, stderr: expect.stringContaining('a child is narrowed with rz token attenuate') });
  });

  it('--debug says where the parent came from and what was signed, never a token', async () => {
    const { h, code } = await rz(derive('--ttl', '15m', '--debug'), { env: { RZ_TOKEN: PARENT } });
    const child = h.stdout().trimEnd();
    expect(code).toBe(0);
    expect(h.stderr()).toContain('debug: parent: The token in RZ_TOKEN\n');
    expect(h.stderr()).toContain(`debug: child ${inspect(child).childId}, caveats {"iat":${NOW_S}} {"exp":${NOW_S + 900}}\n`);
    expect(h.stderr()).not.toContain(PARENT.slice(3));
    expect(h.stderr()).not.toContain(child.slice(4, 40));
    h.cleanup();
  });
});

describe('rz token derive: option values', () => {
  const exp = async (ttl: string) => inspect(await printed(derive('--ttl', ttl), { env: { RZ_TOKEN: PARENT } })).exp - NOW_S;

  it('--ttl takes 90s, 15m, 2h, 7d and plain seconds; more than 7 days works with a warning', async () => {
    expect(await Promise.all(['90s', '15m', '2h', '7d', '900', '1d'].map(exp))).toEqual([90, 900, 7200, 604_800, 900, 86_400]);
    const { h, code } = await rz(derive('--ttl', '8d'), { env: { RZ_TOKEN: PARENT } });
    expect(code).toBe(0);
    expect(h.stderr()).toContain('warning: --ttl is longer than 7 days, the default DERIVED_MAX_TTL_S');
    h.cleanup();
  });

  it('a missing or bad --ttl is a usage error naming the option', async () => {
    expect(await refused(derive('--scopes', 'games:publish'), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --ttl') });
    for (const ttl of ['0', '15x', '1.5h', '-5', '1e3', '', '15 m', 'm']) {
      expect(await refused(derive(`--ttl=${ttl}`), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining('--ttl is a duration') });
    }
    expect(await refused(derive('--ttl', '31d'), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining('--ttl must be 1 s to 30 days') });
  });

  it('--rate is q/w with w a duration; out-of-range and malformed values are usage errors', async () => {
    const rl = async (rate: string) => inspect(await printed(derive('--ttl', '1h', '--rate', rate), { env: { RZ_TOKEN: PARENT } })).rl;
    expect(await rl('60/60s')).toEqual([{ q: 60, w: 60 }]);
    expect(await rl('1000/1h')).toEqual([{ q: 1000, w: 3600 }]);
    expect(await rl('5/30')).toEqual([{ q: 5, w: 30 }]);
    for (const rate of ['0/60s', '60', '60/0s', '60/', 'a/b', '60/60s/1', '-1/60s']) {
      expect(await refused(derive('--ttl', '1h', `--rate=${rate}`), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining('--rate is requests/window') });
    }
    for (const rate of ['60/2d', '2000000/1s']) {
      expect(await refused(derive('--ttl', '1h', '--rate', rate), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining('--rate must be 1 to 1000000 requests') });
    }
  });

  it('--scopes, --aud and --cidr are comma-separated and repeatable, kept once each, in order', async () => {
    const child = await printed(derive('--ttl', '1h', '--scopes', 'apps:read, games:publish', '--scopes', 'tokens:read,apps:read', '--aud', 'a,b', '--aud', 'rz-auth', '--cidr', '10.0.0.0/8,2001:db8::/32', '--cidr', '192.0.2.1'), { env: { RZ_TOKEN: PARENT } });
    expect(caveatsOf(child).slice(2)).toEqual([
      { scopes: ['apps:read', 'games:publish', 'tokens:read'] }, { aud: ['a', 'b', 'rz-auth'] }, { cidrs: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1'] },
    ]);
  });

  it('values outside the caveat grammar are usage errors naming the flag', async () => {
    const cases: [string[], string][] = [
      [['--scopes', 'Games'], '--scopes must be'],
      [['--scopes', 'apps:read,'], '--scopes takes comma-separated names'],
      [['--aud', Array.from({ length: 21 }, (_, i) => `svc${i}`).join(',')], '--aud must be 1 to 20'],
      [['--cidr', '10.0.0.0/33'], '--cidr must be'],
      [['--label', 'bell\u0007'], '--label must be'],
      [['--label', ''], '--label must be'],
      [['--frobnicate'], "Unknown option '--frobnicate'"],
      [['--label', 'a', '--label', 'b'], '--label is given once'],
      [['--ttl', '2h'], '--ttl is given once'],
      [['--rate', '1/1s', '--rate', '2/1s'], '--rate is given once'],
    ];
    for (const [extra, message] of cases) {
      expect(await refused(derive('--ttl', '1h', ...extra), { env: { RZ_TOKEN: PARENT } })).toMatchObject({ code: 2, stderr: expect.stringContaining(message) });
    }
  });
});
