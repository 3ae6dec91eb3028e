import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkPassword, loadBlocklist, normalizePassword, readBlocklist } from '../../src/account/password-policy.js';

const blocklist = loadBlocklist();
const context = { minLength: 15, blocklist, email: 'ada@example.com', username: 'ada_lovelace' };

describe('password policy (NIST SP 800-63B-4)', () => {
  it('ships a sizeable lower-cased blocklist', () => {
    expect(blocklist.size).toBeGreaterThan(50_000);
    expect(blocklist.has('password')).toBe(true);
  });

  it.each(['correct horse battery staple', 'Tr0ub4dor&3-is-not-enough', 'ñandú-çedille-ünïcode'])('accepts %s (no composition rules)', (p) => {
    expect(checkPassword(normalizePassword(p), context)).toBeNull();
  });

  it.each([
    ['too short', 'short1!'],
    ['common (case-insensitive)', '1QAZ2WSX3EDC4RFV'],
    ['equal to the username, in any case', 'ADA_LOVELACE'],
    ['one repeated character', 'zzzzzzzzzzzzzzzzzzzz'],
    ['a control character', 'correct horse\u0000battery staple'],
    ['over 1024 bytes', '€'.repeat(400)],
  ])('refuses a password that is %s', (_why, p) => {
    // A minimum of 8 so that the username rule, not the length rule, is what refuses it.
    expect(checkPassword(normalizePassword(p), { ...context, minLength: 8 })).not.toBeNull();
  });

  it('counts characters, not bytes, and normalises with NFKC', () => {
    expect(checkPassword('éàü'.repeat(5), context)).toBeNull();
    expect(normalizePassword('ｆｕｌｌ')).toBe('full');
  });

  // Regression: 4,096 characters of combining marks (the schema's limit) took about 13 ms of event
  // loop to normalize, quadratic in the run, before the 1024-byte cap refused the password.
  describe('a password too long for the byte cap is refused without being normalized', () => {
    const marks = (n: number) => `a${'\u0301\u0323\u0334'.repeat(n)}`.slice(0, n);

    it('past 1536 code points the input is not normalized, and the cap refuses it', () => {
      const normalize = vi.spyOn(String.prototype, 'normalize');
      try {
        for (const n of [1537, 2048, 4096]) {
          const password = normalizePassword(marks(n));
          expect(password).toBe(marks(n));
          expect(checkPassword(password, context)).toEqual({ field: 'password', message: 'must be at most 1024 bytes' });
        }
        expect(normalize).not.toHaveBeenCalled();
        normalizePassword(marks(1536));
        expect(normalize).toHaveBeenCalledTimes(1);
      } finally {
        normalize.mockRestore();
      }
    });

    it('which changes no answer: no code point normalizes to fewer than 2 bytes for each 3 it takes apart into', () => {
      for (let cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp < 0xe000) continue;
        const char = String.fromCodePoint(cp);
        const parts = [...char.normalize('NFKD')].length;
        if (Buffer.byteLength(char.normalize('NFKC')) * 3 < parts * 2) expect.fail(`U+${cp.toString(16)}`);
      }
      // The bound is tight: U+01D5 is three code points in NFD and two bytes in NFKC.
      expect(Buffer.byteLength('U\u0308\u0304'.normalize('NFKC'))).toBe(2);
    });
  });
});

describe('blocklist file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rz-blocklist-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads entries in any order, with or without a final newline, CRLF included, empty lines skipped', () => {
    const path = join(dir, 'list.txt');
    writeFileSync(path, 'charlie\r\nalpha\n\nbravo');
    const list = readBlocklist(path);
    expect([...list].sort()).toEqual(['alpha', 'bravo', 'charlie']);
    expect(list.has('')).toBe(false);
  });

  it('holds every line of the shipped list, and is read once per process', () => {
    const lines = readFileSync(new URL('../../assets/common-passwords.txt', import.meta.url), 'utf8').split('\n').filter(Boolean);
    expect(blocklist.size).toBe(new Set(lines).size);
    for (const line of lines.filter((_, i) => i % 97 === 0)) expect(blocklist.has(line)).toBe(true);
    expect(loadBlocklist()).toBe(blocklist);
  });
});
