/*
 * Byte and text helpers shared by the Node entry and the WebCrypto twin: nothing here may use a
 * `node:` module, so both produce the same bytes from the same code.
 */

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The value of each code unit as a base64url character, -1 for every other (all 65,536 of them). */
const B64URL_VALUE = new Int8Array(65_536).fill(-1);
for (let i = 0; i < B64URL.length; i++) B64URL_VALUE[B64URL.charCodeAt(i)] = i;
const sextetOf = (code: number): number => B64URL_VALUE[code] ?? -1;

const at = (bytes: Uint8Array, i: number): number => bytes[i] ?? 0;

/** Two base64url characters for each 12-bit value: one lookup per 1.5 bytes. */
const PAIRS = Array.from({ length: 4096 }, (_, v) => B64URL.charAt(v >>> 6) + B64URL.charAt(v & 63));
const pair = (v: number): string => PAIRS[v] ?? '';

/** Base64url without padding (RFC 4648 section 5). */
export function toBase64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const v = (at(bytes, i) << 16) | (at(bytes, i + 1) << 8) | at(bytes, i + 2);
    out += pair(v >>> 12) + pair(v & 4095);
  }
  const rest = bytes.length - i;
  if (rest === 1) out += pair(at(bytes, i) << 4);
  else if (rest === 2) {
    const v = (at(bytes, i) << 16) | (at(bytes, i + 1) << 8);
    out += pair(v >>> 12) + B64URL.charAt((v >>> 6) & 63);
  }
  return out;
}

/**
 * The bytes of unpadded base64url text, or null. Only the canonical spelling is accepted: a
 * length of 1 mod 4, a character outside the alphabet or non-zero bits after the last byte is
 * refused, so one body has exactly one text (a token's digest then names one token). Linear.
 */
export function fromBase64url(text: string): Uint8Array | null {
  const rest = text.length % 4;
  if (rest === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  const full = text.length - rest;
  let o = 0;
  let bad = 0;
  for (let i = 0; i < full; i += 4) {
    // Any invalid character makes `bad` negative; checked once after the loop, not per character.
    const a = sextetOf(text.charCodeAt(i)), b = sextetOf(text.charCodeAt(i + 1));
    const c = sextetOf(text.charCodeAt(i + 2)), d = sextetOf(text.charCodeAt(i + 3));
    bad |= a | b | c | d;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = v >>> 16;
    out[o++] = (v >>> 8) & 255;
    out[o++] = v & 255;
  }
  if (bad < 0) return null;
  if (rest === 0) return out;
  const a = sextetOf(text.charCodeAt(full)), b = sextetOf(text.charCodeAt(full + 1));
  const c = rest === 3 ? sextetOf(text.charCodeAt(full + 2)) : 0;
  if ((a | b | c) < 0) return null;
  const v = (a << 18) | (b << 12) | (c << 6);
  // Bits the last character carries past the final byte must be zero.
  if ((rest === 2 ? v & 0xffff : v & 0xff) !== 0) return null;
  out[o++] = v >>> 16;
  if (rest === 3) out[o] = (v >>> 8) & 255;
  return out;
}

const CRC_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c;
}

/** CRC32 (the zlib polynomial) of text whose characters are all ASCII, as the callers check first. */
function crc32Ascii(text: string): number {
  let c = -1;
  for (let i = 0; i < text.length; i++) c = (CRC_TABLE[(c ^ text.charCodeAt(i)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^6 > 2^32, so six characters hold any CRC32. */
export const CHECKSUM_LENGTH = 6;

/** The house checksum rule: 6 base62 characters (most significant first) of the CRC32 of `head`. */
export function checksum(head: string): string {
  let rest = crc32Ascii(head);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** Whether the last 6 characters of ASCII `value` are the checksum of the rest. */
export function checksumHolds(value: string): boolean {
  const split = value.length - CHECKSUM_LENGTH;
  return split > 0 && checksum(value.slice(0, split)) === value.slice(split);
}

export const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

const POOL = new Uint8Array(4096);
let poolAt = POOL.length;

/** A random version 4 UUID's 16 bytes (RFC 9562 section 5.4) from the runtime's CSPRNG. */
export function randomUuidBytes(): Uint8Array {
  // One call to the CSPRNG per 256 ids, as Node's own randomUUID does: a call costs more than an id.
  if (poolAt === POOL.length) {
    globalThis.crypto.getRandomValues(POOL);
    poolAt = 0;
  }
  const bytes = POOL.slice(poolAt, (poolAt += 16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  return bytes;
}

/** 16 bytes in UUID text form (RFC 9562), whatever their version bits. */
export function uuidText(bytes: Uint8Array): string {
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 16 bytes of a UUID in text form, or null. */
export function uuidBytes(text: string): Uint8Array | null {
  if (!UUID.test(text)) return null;
  const h = text.replaceAll('-', '');
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(h.slice(2 * i, 2 * i + 2), 16));
}

/** Equal lengths and bytes, in time that depends on the length only (no early exit on a mismatch). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= at(a, i) ^ at(b, i);
  return diff === 0;
}

const ENCODER = new TextEncoder();

/** UTF-8 bytes of `text`; ASCII (nearly every caveat) without a call into the encoder. */
export function utf8(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return ENCODER.encode(text);
    out[i] = code;
  }
  return out;
}
/** Fatal: invalid UTF-8 is an error, not U+FFFD; the BOM is kept, so it fails the grammar. */
export const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
