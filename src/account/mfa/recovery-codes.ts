import { createHash, randomBytes } from 'node:crypto';

/*
 * Recovery codes (contract §12.3): 10 per set, each 80 random bits as 16 Crockford base32
 * characters shown as XXXX-XXXX-XXXX-XXXX, stored as SHA-256. 80 bits from a CSPRNG cannot be
 * guessed offline from a digest, so a fast hash is enough (unlike passwords).
 */

export const RECOVERY_CODES_PER_SET = 10;
const CODE_BYTES = 10;
/** Crockford's alphabet: no I, L, O or U. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Longer input is refused before any work on it. */
const MAX_INPUT = 64;

/** 80 bits as 16 symbols of 5 bits, most significant first. */
function encode(bytes: Buffer): string {
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let out = '';
  for (let shift = 75n; shift >= 0n; shift -= 5n) out += ALPHABET[Number((bits >> shift) & 31n)];
  return out;
}

const display = (code: string): string => code.match(/.{4}/g)?.join('-') ?? code;

/** A new set of codes as shown to the user, once. `random` is a CSPRNG; tests pass a fixed one. */
export function newRecoveryCodes(random: (size: number) => Buffer = randomBytes): string[] {
  return Array.from({ length: RECOVERY_CODES_PER_SET }, () => display(encode(random(CODE_BYTES))));
}

/**
 * The canonical form of a code as typed: case and dashes ignored, and Crockford's decoding of the
 * look-alikes (O as 0, I and L as 1). Null for anything else, spaces included.
 */
export function normalizeRecoveryCode(input: string): string | null {
  if (input.length > MAX_INPUT) return null;
  const code = input.replaceAll('-', '').toUpperCase().replaceAll('O', '0').replace(/[IL]/g, '1');
  return /^[0-9A-HJKMNP-TV-Z]{16}$/.test(code) ? code : null;
}

/** The stored form of a canonical code: hex SHA-256. */
export const recoveryCodeDigest = (canonical: string): string => createHash('sha256').update(canonical).digest('hex');

/** The digests of a set as shown, for the store. */
export const recoveryCodeDigests = (codes: readonly string[]): string[] =>
  codes.map((code) => {
    const canonical = normalizeRecoveryCode(code);
    if (canonical === null) throw new Error('not a recovery code');
    return recoveryCodeDigest(canonical);
  });
