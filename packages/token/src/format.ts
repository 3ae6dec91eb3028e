import { type Caveat, encodeCaveat, parseCaveat } from './caveats.js';
import { CHECKSUM_LENGTH, checksum, checksumHolds, fromBase64url, toBase64url, utf8 } from './bytes.js';

/*
 * The rzd_ format of contract §14.4:
 *   "rzd_" || B64URL(body) || C,  C = 6 base62 characters of CRC32("rzd_" || B64URL(body))
 *   body = 0x01 || parent_ref[16] || child_id[16] || n[1] || n × (len[2, big-endian] || caveat[len]) || tag[32]
 */

export const PREFIX = 'rzd_';
export const VERSION = 0x01;
export const MAX_TOKEN_LENGTH = 4096;
export const MIN_CAVEATS = 2;
export const MAX_CAVEATS = 16;
export const MAX_CAVEAT_BYTES = 512;
export const REF_BYTES = 16;
export const ID_BYTES = 16;
export const TAG_BYTES = 32;
/** version, parent_ref, child_id, n */
const HEAD_BYTES = 1 + REF_BYTES + ID_BYTES + 1;
/** The smallest body: two one-byte caveats. */
const MIN_BODY_BYTES = HEAD_BYTES + MIN_CAVEATS * 3 + TAG_BYTES;
const MIN_TOKEN_LENGTH = PREFIX.length + Math.ceil((MIN_BODY_BYTES * 4) / 3) + CHECKSUM_LENGTH;

/** A well-formed child, read without any secret. Its tag is not checked yet. */
export interface Child {
  readonly parentRef: Uint8Array;
  readonly childId: Uint8Array;
  /** Each caveat's bytes as signed, in order. */
  readonly raw: readonly Uint8Array[];
  readonly caveats: readonly Caveat[];
  readonly tag: Uint8Array;
}

/** `0x01 || parent_ref || child_id`: what t0 signs. */
export function chainHead(parentRef: Uint8Array, childId: Uint8Array): Uint8Array {
  const head = new Uint8Array(1 + REF_BYTES + ID_BYTES);
  head[0] = VERSION;
  head.set(parentRef, 1);
  head.set(childId, 1 + REF_BYTES);
  return head;
}

/** The parts of a body, or null: version, caveat count and lengths, nothing left over. */
function splitBody(body: Uint8Array): Framing | null {
  if (body.length < MIN_BODY_BYTES || body[0] !== VERSION) return null;
  const n = body[HEAD_BYTES - 1] ?? 0;
  if (n < MIN_CAVEATS || n > MAX_CAVEATS) return null;
  const end = body.length - TAG_BYTES;
  const raw: Uint8Array[] = [];
  let at = HEAD_BYTES;
  for (let i = 0; i < n; i++) {
    if (at + 2 > end) return null;
    const length = ((body[at] ?? 0) << 8) | (body[at + 1] ?? 0);
    at += 2;
    if (length < 1 || length > MAX_CAVEAT_BYTES || at + length > end) return null;
    raw.push(body.subarray(at, at + length));
    at += length;
  }
  if (at !== end) return null;
  return { parentRef: body.subarray(1, 1 + REF_BYTES), childId: body.subarray(1 + REF_BYTES, HEAD_BYTES - 1), raw, tag: body.subarray(end) };
}

/** Base64url characters holding the version and n: 36 bytes, so any refusal on them is O(1). */
const HEAD_TEXT = Math.ceil(HEAD_BYTES / 3) * 4;

/** A child's framing: its parts, with the caveats as bytes whose grammar is not checked yet. */
export type Framing = Omit<Child, 'caveats'>;

/**
 * The framing of `token`, or null. Every bound of contract §14.4, cheapest first: the length
 * (before anything reads the text), the prefix, the version and 2 ≤ n ≤ 16 (from the first 48
 * characters), the canonical base64url of the rest, the checksum, each caveat 1–512 bytes and
 * nothing left over. Linear in the token's length, itself at most 4,096 characters.
 */
export function readFraming(token: unknown): Framing | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || token.length < MIN_TOKEN_LENGTH) return null;
  if (!token.startsWith(PREFIX)) return null;
  const head = fromBase64url(token.slice(PREFIX.length, PREFIX.length + HEAD_TEXT));
  const n = head?.[HEAD_BYTES - 1] ?? 0;
  if (head?.[0] !== VERSION || n < MIN_CAVEATS || n > MAX_CAVEATS) return null;
  // The decoder refuses any character outside base64url, so the checksum reads ASCII only.
  const body = fromBase64url(token.slice(PREFIX.length, -CHECKSUM_LENGTH));
  return body && checksumHolds(token) ? splitBody(body) : null;
}

/**
 * The child in `token`, or null: its framing (readFraming), then each caveat's grammar (§14.5),
 * `iat` first and at least one `exp`. No HMAC and no lookup happen here.
 */
export function readChild(token: unknown): Child | null {
  const parts = readFraming(token);
  if (!parts) return null;
  const caveats: Caveat[] = [];
  for (const raw of parts.raw) {
    const caveat = parseCaveat(raw);
    if (caveat === null) return null;
    caveats.push(caveat);
  }
  if (caveats[0]?.type !== 'iat' || !caveats.some((c) => c.type === 'exp')) return null;
  return { ...parts, caveats };
}

/** The token for these parts, or null when it would break a bound of §14.4. */
export function writeChild(parentRef: Uint8Array, childId: Uint8Array, raw: readonly Uint8Array[], tag: Uint8Array): string | null {
  if (raw.length < MIN_CAVEATS || raw.length > MAX_CAVEATS) return null;
  let size = HEAD_BYTES + TAG_BYTES;
  for (const caveat of raw) {
    if (caveat.length < 1 || caveat.length > MAX_CAVEAT_BYTES) return null;
    size += 2 + caveat.length;
  }
  const body = new Uint8Array(size);
  body.set(chainHead(parentRef, childId));
  body[HEAD_BYTES - 1] = raw.length;
  let at = HEAD_BYTES;
  for (const caveat of raw) {
    body[at] = caveat.length >>> 8;
    body[at + 1] = caveat.length & 255;
    body.set(caveat, at + 2);
    at += 2 + caveat.length;
  }
  body.set(tag, at);
  const head = PREFIX + toBase64url(body);
  const token = head + checksum(head);
  return token.length <= MAX_TOKEN_LENGTH ? token : null;
}

/** A caveat's bytes as the chain signs them. */
export const caveatBytes = (caveat: Caveat): Uint8Array => utf8(encodeCaveat(caveat));
