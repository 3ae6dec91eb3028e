import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits, base64url: 43 characters (contract §12.4). */
const TOKEN_BYTES = 32;
const TOKEN_LENGTH = 43;

/** The stored form of an `mfa_token`: SHA-256, base64url. The token itself is never stored. */
export const mfaTokenDigest = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** A new `mfa_token` and its digest. `random` is a CSPRNG; tests pass a fixed one. */
export function newMfaToken(random: (size: number) => Buffer = randomBytes): { readonly token: string; readonly digest: string } {
  const token = random(TOKEN_BYTES).toString('base64url');
  return { token, digest: mfaTokenDigest(token) };
}

/** The digest to look up for a presented token, or null when it cannot be one (checked before any hashing). */
export function presentedMfaTokenDigest(input: string): string | null {
  return input.length === TOKEN_LENGTH && /^[A-Za-z0-9_-]+$/.test(input) ? mfaTokenDigest(input) : null;
}
