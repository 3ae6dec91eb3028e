import { randomBytes } from 'node:crypto';
import { Secret, URI } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { matchingStep, newTotpSecret, normalizeTotpCode, otpauthUri, totpCodeAt, totpStep } from '../../../src/account/mfa/totp.js';
import { TotpSecrets } from '../../../src/account/mfa/totp-secrets.js';
import { UnsealError } from '../../../src/lib/sealed.js';
import { parseSealingKey } from '../../../src/lib/sealed.js';

// RFC 6238 Appendix B: the SHA-1 test secret is the ASCII string "12345678901234567890".
const RFC_SECRET = Secret.fromLatin1('12345678901234567890').base32;
const NOW = Date.parse('2026-11-21T09:30:10.000Z');

describe('TOTP (RFC 6238, contract §12.3, §12.6)', () => {
  it('matches the RFC 6238 test vectors (SHA-1, last six digits)', () => {
    // Appendix B gives 8 digits; a 6-digit code is the same truncation modulo 10^6.
    expect(totpCodeAt(RFC_SECRET, 59_000)).toBe('287082');
    expect(totpCodeAt(RFC_SECRET, 1_111_111_109_000)).toBe('081804');
    expect(totpCodeAt(RFC_SECRET, 2_000_000_000_000)).toBe('279037');
    expect(totpStep(59_000)).toBe(1);
  });

  it('makes 20-byte secrets from the CSPRNG it is given, 32 base32 characters', () => {
    const secret = newTotpSecret(() => Buffer.alloc(20, 0xff));
    expect(secret).toBe('7'.repeat(32));
    expect(newTotpSecret()).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(newTotpSecret());
    expect(() => newTotpSecret((n) => randomBytes(n))).not.toThrow();
  });

  it('writes the otpauth:// URI of the contract, which authenticator libraries read back', () => {
    const secret = newTotpSecret();
    const uri = otpauthUri('auth.example.com', 'alice', secret);
    expect(uri).toBe(`otpauth://totp/auth.example.com:alice?secret=${secret}&issuer=auth.example.com&algorithm=SHA1&digits=6&period=30`);
    const parsed = URI.parse(otpauthUri('Example Games', 'bob smith', secret));
    expect(parsed).toMatchObject({ issuer: 'Example Games', label: 'bob smith', algorithm: 'SHA1', digits: 6, period: 30 });
    expect(parsed.secret.base32).toBe(secret);
  });

  it('accepts the codes of steps T−1, T and T+1 and names their step; T−2 and T+2 are refused', () => {
    const t = totpStep(NOW);
    for (const delta of [-1, 0, 1]) expect(matchingStep(RFC_SECRET, totpCodeAt(RFC_SECRET, NOW + delta * 30_000), NOW)).toBe(t + delta);
    for (const delta of [-2, 2]) expect(matchingStep(RFC_SECRET, totpCodeAt(RFC_SECRET, NOW + delta * 30_000), NOW)).toBeNull();
  });

  it('takes exactly six ASCII digits once spaces are removed (contract §12.10)', () => {
    expect(normalizeTotpCode('123456')).toBe('123456');
    expect(normalizeTotpCode('12 34 56')).toBe('123456');
    expect(normalizeTotpCode(' 123 456 ')).toBe('123456');
    for (const odd of ['１２３４５６', '12345', '1234567', '+123456', '-123456', '12345６', '١٢٣٤٥٦', '12\t3456', '123456\n', '12-34-56', '0x1234', '', ' '.repeat(65) + '123456']) {
      expect(normalizeTotpCode(odd), JSON.stringify(odd)).toBeNull();
    }
  });
});

describe('TOTP secrets at rest (MFA_ENCRYPTION_KEY)', () => {
  const key = () => parseSealingKey(randomBytes(32).toString('base64'), 'MFA_ENCRYPTION_KEY');

  it('are ciphertext bound to their factor row, and open with the key that sealed them', () => {
    const secrets = new TotpSecrets({ current: key(), old: null });
    const sealed = secrets.seal('factor-1', RFC_SECRET);
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain(RFC_SECRET);
    expect(secrets.open('factor-1', sealed)).toBe(RFC_SECRET);
    // Copied into another factor's row, it does not open (the row id is the GCM additional data).
    expect(() => secrets.open('factor-2', sealed)).toThrow(UnsealError);
    expect(secrets.stale(sealed)).toBe(false);
  });

  it('still open under MFA_ENCRYPTION_KEY_OLD during a rotation, and say they should be sealed again', () => {
    const [before, after] = [key(), key()];
    const sealed = new TotpSecrets({ current: before, old: null }).seal('f', RFC_SECRET);
    const rotated = new TotpSecrets({ current: after, old: before });
    expect(rotated.open('f', sealed)).toBe(RFC_SECRET);
    expect(rotated.stale(sealed)).toBe(true);
    expect(() => new TotpSecrets({ current: after, old: null }).open('f', sealed)).toThrow(/neither MFA_ENCRYPTION_KEY nor MFA_ENCRYPTION_KEY_OLD/);
  });

  it('are never stored or read plain: without a key TOTP is off', () => {
    const off = new TotpSecrets({ current: null, old: null });
    expect(off.enabled).toBe(false);
    expect(() => off.seal('f', RFC_SECRET)).toThrow(/MFA_ENCRYPTION_KEY/);
    expect(() => new TotpSecrets({ current: key(), old: null }).open('f', RFC_SECRET)).toThrow(/not encrypted/);
  });
});
