import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPassword, loadBlocklist, normalizePassword } from '../../src/users/password-policy.js';

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

describe('compact blocklist', () => {
  it('finds exactly its entries, first, last and in between', async () => {
    const { Blocklist } = await import('../../src/users/password-policy.js');
    const list = new Blocklist(['delta', 'alpha', 'charlie', 'bravo', 'alpha', '', 'échelle']);
    expect(list.size).toBe(5);
    for (const word of ['alpha', 'bravo', 'charlie', 'delta', 'échelle']) expect(list.has(word)).toBe(true);
    for (const word of ['', 'alph', 'alphaa', 'a', 'zulu', 'bravo\ncharlie', 'charlie\n']) expect(list.has(word)).toBe(false);
  });

  it('agrees with a Set on the shipped list', () => {
    const lines = readFileSync(new URL('../../assets/common-passwords.txt', import.meta.url), 'utf8').split('\n').filter(Boolean);
    const set = new Set(lines);
    for (const line of lines.filter((_, i) => i % 997 === 0)) expect(blocklist.has(line)).toBe(set.has(line));
    expect(blocklist.size).toBe(set.size);
  });
});
