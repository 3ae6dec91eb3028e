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

const WINDOW = BODY_LENGTH + CHECKSUM_LENGTH;
/** Runs of base62 characters long enough to hold a body and its checksum, each found from its start only. */
const LONG_BASE62_RUN = new RegExp(`(?<![0-9A-Za-z])[0-9A-Za-z]{${WINDOW},}`, 'g');
/**
 * 2^32 − 1 < 5 × 62^5, so a checksum starts with 0 to 4: a one-character test before any CRC32
 * (were it missing, `z` would let every window through to the CRC32s, never fewer).
 */
const CHECKSUM_FIRST_MAX = ALPHABET[Math.floor(0xffffffff / 62 ** (CHECKSUM_LENGTH - 1))] ?? 'z';
const PREFIXES = Object.values(PREFIX);

/** Whether the 49 characters of `run` from `at` are a body and the checksum of one of the prefixes with it. */
function isBodyAt(run: string, at: number): boolean {
  const sum = run.slice(at + BODY_LENGTH, at + WINDOW);
  // The alphabet is in code unit order, so comparing characters compares digits.
  if ((sum[0] ?? '') > CHECKSUM_FIRST_MAX) return false;
  const body = run.slice(at, at + BODY_LENGTH);
  return PREFIXES.some((prefix) => checksum(prefix + body) === sum);
}

/**
 * Whether `text` holds the body of a token of any kind, whatever stands before it (its prefix in
 * any case, another prefix, letters, nothing) or after it: the 43 characters and their checksum
 * are the whole secret. Every 49-character window of every run of base62 characters is tried, so
 * a random window passes by chance about 3 times in 62^6. Linear: at most one window per character
 * of `text`, each a one-character test (which 57 in 62 random windows fail) then three CRC32s of
 * at most 47 bytes.
 */
export function holdsTokenBody(text: string): boolean {
  for (const [run] of text.matchAll(LONG_BASE62_RUN)) {
    for (let at = 0; at + WINDOW <= run.length; at++) if (isBodyAt(run, at)) return true;
  }
  return false;
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
