import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** The opaque tokens of users: API tokens and app tokens. */
export type TokenKind = 'api' | 'app';

/** Every opaque token: the users' and the platform services' credentials (`rzs_`). */
export type OpaqueKind = TokenKind | 'service';

export const PREFIX: Readonly<Record<OpaqueKind, string>> = { api: 'rz_', app: 'rza_', service: 'rzs_' };

export const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry 43 × log2(62) ≈ 256.03 bits. */
export const BODY_LENGTH = 43;
/** 62^6 > 2^32, so six characters hold any CRC32. */
export const CHECKSUM_LENGTH = 6;
/** A token's shape, checked before its checksum; the API document states the same patterns. */
export const TOKEN_SHAPE: Readonly<Record<OpaqueKind, RegExp>> = {
  api: /^rz_[0-9A-Za-z]{49}$/,
  app: /^rza_[0-9A-Za-z]{49}$/,
  service: /^rzs_[0-9A-Za-z]{49}$/,
};
const SHAPES = Object.entries(TOKEN_SHAPE) as ReadonlyArray<[OpaqueKind, RegExp]>;

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** CRC32 over prefix + body, so a relabelled `rz_` → `rza_` token fails the check. */
function checksum(prefixAndBody: string): string {
  return base62(crc32(prefixAndBody), CHECKSUM_LENGTH);
}

/** Uniform base62 characters from the CSPRNG, by rejection sampling (no modulo bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes at or above it would bias the first characters of the alphabet.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** A new token value of the given kind: prefix + 43 random base62 + 6 base62 CRC32. */
export function generateToken(kind: OpaqueKind): string {
  const head = PREFIX[kind] + randomBase62(BODY_LENGTH);
  return head + checksum(head);
}

/**
 * The kind of a well-formed token, or null. Checks shape and checksum offline, so strings that are
 * not tokens never reach storage.
 */
export function tokenKind(value: string): OpaqueKind | null {
  const kind = SHAPES.find(([, shape]) => shape.test(value))?.[0];
  if (kind === undefined) return null;
  const split = value.length - CHECKSUM_LENGTH;
  return checksum(value.slice(0, split)) === value.slice(split) ? kind : null;
}

/**
 * The stored form of a token. A plain SHA-256 is enough: the value has 256 random bits, so it
 * cannot be guessed from its digest, and lookups by digest reveal nothing through timing.
 */
export function tokenDigest(value: string): string {
  // One-shot crypto.hash: no Hash object per call, on the hot path of every token request.
  return hash('sha256', value, 'hex');
}

/** What lists show instead of the value: the prefix and the last four characters. */
export function tokenHint(value: string, kind: OpaqueKind): string {
  return PREFIX[kind] + value.slice(-4);
}
