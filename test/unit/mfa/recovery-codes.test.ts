import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeDigest, recoveryCodeDigests } from '../../../src/account/mfa/recovery-codes.js';

describe('recovery codes (contract §12.3)', () => {
  it('are ten codes of 16 Crockford base32 characters, XXXX-XXXX-XXXX-XXXX, 80 bits each', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(new Set(codes).size).toBe(10);
  });

  it('encode the CSPRNG bytes they are given, all 80 bits of them', () => {
    expect(newRecoveryCodes(() => Buffer.alloc(10, 0))[0]).toBe('0000-0000-0000-0000');
    expect(newRecoveryCodes(() => Buffer.alloc(10, 0xff))[0]).toBe('ZZZZ-ZZZZ-ZZZZ-ZZZZ');
    // 0x01 then zeros sets bit 72 of 0…79; the second symbol holds bits 74…70, so its value is 4.
    expect(newRecoveryCodes(() => Buffer.from([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]))[0]).toBe('0400-0000-0000-0000');
    expect(newRecoveryCodes(() => Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))[0]).toBe('0000-0000-0000-0001');
  });

  it('ignore case and dashes on input, with Crockford look-alikes; refuse anything else', () => {
    expect(normalizeRecoveryCode('ABCD-EFGH-JKMN-PQRS')).toBe('ABCDEFGHJKMNPQRS');
    expect(normalizeRecoveryCode('abcdefghjkmnpqrs')).toBe('ABCDEFGHJKMNPQRS');
    expect(normalizeRecoveryCode('abcd-efgh-jkmn-pqr-s')).toBe('ABCDEFGHJKMNPQRS');
    expect(normalizeRecoveryCode('OOOO-IIII-LLLL-0000')).toBe('0000111111110000');
    for (const odd of ['ABCD EFGH JKMN PQRS', 'ABCD-EFGH-JKMN-PQR', 'ABCD-EFGH-JKMN-PQRSX', 'ABCD-EFGH-JKMN-PQRU', 'ＡBCD-EFGH-JKMN-PQRS', '', '-'.repeat(60) + 'ABCDEFGHJKMNPQRS']) {
      expect(normalizeRecoveryCode(odd), odd).toBeNull();
    }
  });

  it('are stored as the SHA-256 of their canonical form', () => {
    const [code = ''] = newRecoveryCodes();
    const canonical = code.replaceAll('-', '');
    expect(recoveryCodeDigest(canonical)).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(recoveryCodeDigests([code, code.toLowerCase()])).toEqual([recoveryCodeDigest(canonical), recoveryCodeDigest(canonical)]);
  });
});
