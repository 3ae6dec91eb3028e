import { crc32 } from 'node:zlib';

/** API and app tokens; a service credential is no caller and never goes out for introspection. */
const OPAQUE = /^rza?_[0-9A-Za-z]{49}$/;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECKSUM_LENGTH = 6;

/**
 * Whether `token` is an API or app token by its published format (rz-auth's
 * `/.well-known/rz-token-formats.json`): the prefix, 43 base62 characters, then the CRC32 of
 * prefix and body in 6 base62 characters. Checked offline, as rz-auth itself does before a lookup,
 * so a mistyped or made-up value never costs an introspection.
 */
export function isOpaqueToken(token: string): boolean {
  if (!OPAQUE.test(token)) return false;
  const split = token.length - CHECKSUM_LENGTH;
  let rest = crc32(token.slice(0, split));
  for (let i = token.length - 1; i >= split; i--) {
    if (token[i] !== ALPHABET[rest % 62]) return false;
    rest = Math.floor(rest / 62);
  }
  return true;
}
