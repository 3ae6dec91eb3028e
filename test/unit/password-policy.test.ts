import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Blocklist, checkPassword, loadBlocklist, normalizePassword } from '../../src/users/password-policy.js';

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
});

describe('blocklist searched on disk', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rz-blocklist-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const listFile = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  // Byte order, as LC_ALL=C sort -u writes it: digits, upper case, lower case, then UTF-8's multi-byte.
  const byteOrder = (entries: string[]): string[] => [...new Set(entries)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

  it('finds exactly its entries across many blocks: first, last, every one, and nothing in between', () => {
    const entries = byteOrder([...Array.from({ length: 1000 }, (_, i) => `word${String(i * 7).padStart(5, '0')}`), 'Zebra', '0000', 'échelle', 'zz']);
    const list = new Blocklist(listFile('many.txt', `${entries.join('\n')}\n`));
    expect(list.size).toBe(entries.length);
    for (const entry of entries) expect(list.has(entry)).toBe(true);
    const absent = ['', '/', '000', '00000', 'word', 'word00001', 'word06993x', 'word06994', 'zebra', 'zzz', 'échell', 'échellee', '\uffff', 'word00000\nword00007'];
    for (const word of absent) expect(list.has(word)).toBe(false);
  });

  it('reads a last line with no newline after it, and a list shorter than one block', () => {
    const list = new Blocklist(listFile('short.txt', 'alpha\nbravo\ncharlie'));
    expect(list.size).toBe(3);
    for (const word of ['alpha', 'bravo', 'charlie']) expect(list.has(word)).toBe(true);
    for (const word of ['alph', 'charli', 'charlie\n', 'delta', 'a']) expect(list.has(word)).toBe(false);
    expect(new Blocklist(listFile('empty.txt', '')).has('alpha')).toBe(false);
  });

  it.each([
    ['out of order', 'bravo\nalpha\n', 'line 2 is out of order or repeated'],
    ['repeated', 'alpha\nalpha\n', 'line 2 is out of order or repeated'],
    ['in locale order, not byte order', 'alpha\nBravo\n', 'line 2 is out of order or repeated'],
    ['holding an empty line', 'alpha\n\nbravo\n', 'line 2 is empty'],
  ])('refuses a list %s, naming the line', (_why, text, message) => {
    const path = listFile('bad.txt', text);
    expect(() => new Blocklist(path)).toThrow(`${path}: ${message}; the list must be sorted with LC_ALL=C sort -u`);
  });

  it('indexes a list again when the file is replaced under it', () => {
    const path = listFile('replaced.txt', 'alpha\nbravo\n');
    const list = new Blocklist(path);
    expect(list.has('bravo')).toBe(true);
    writeFileSync(path, 'charlie\ndelta\necho\n');
    expect(list.has('bravo')).toBe(false);
    expect(list.has('echo')).toBe(true);
    expect(list.size).toBe(3);
  });

  it('agrees with a Set on the shipped list, which is sorted as the search needs', () => {
    const lines = readFileSync(new URL('../../assets/common-passwords.txt', import.meta.url), 'utf8').split('\n').filter(Boolean);
    const set = new Set(lines);
    expect(lines).toEqual(byteOrder(lines));
    for (const line of lines.filter((_, i) => i % 97 === 0)) {
      expect(blocklist.has(line)).toBe(true);
      expect(blocklist.has(`${line}~`)).toBe(set.has(`${line}~`));
    }
    expect(blocklist.size).toBe(set.size);
  });
});
