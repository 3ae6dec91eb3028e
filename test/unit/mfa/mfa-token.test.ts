import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newMfaToken, presentedMfaTokenDigest } from '../../../src/account/mfa/mfa-token.js';

describe('mfa_token (contract §12.4)', () => {
  it('is 256 random bits in base64url, stored as its SHA-256', () => {
    const { token, digest } = newMfaToken(() => Buffer.alloc(32, 7));
    expect(token).toBe(Buffer.alloc(32, 7).toString('base64url'));
    expect(token).toHaveLength(43);
    expect(digest).toBe(createHash('sha256').update(token).digest('base64url'));
    expect(newMfaToken().token).not.toBe(newMfaToken().token);
  });

  it('is looked up only in its own shape', () => {
    const { token, digest } = newMfaToken();
    expect(presentedMfaTokenDigest(token)).toBe(digest);
    for (const odd of [token.slice(1), `${token}A`, `${token.slice(1)}=`, `${token.slice(1)}.`, '', 'x'.repeat(10_000)]) expect(presentedMfaTokenDigest(odd)).toBeNull();
  });
});
