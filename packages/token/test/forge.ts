import { createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { generateToken } from '../../../src/lib/token-format.js';

/*
 * Builds rzd_ tokens byte by byte with node:crypto and node:zlib alone, not with the package: the
 * hostile cases (17 caveats, a 513-byte caveat, another version) need bodies the package refuses
 * to write, and a second implementation of the format checks the first.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `head` with its 6-character base62 CRC32 (most significant first). */
export function withChecksum(head: string): string {
  let rest = crc32(head);
  let sum = '';
  for (let i = 0; i < 6; i++) {
    sum = BASE62.charAt(rest % 62) + sum;
    rest = Math.floor(rest / 62);
  }
  return head + sum;
}

/** A token for `body` with a valid checksum. */
export const tokenOf = (body: Uint8Array): string => withChecksum(`rzd_${Buffer.from(body).toString('base64url')}`);
/** The body of a token whose base64url part is well formed. */
export const bodyOf = (token: string): Buffer => Buffer.from(token.slice(4, -6), 'base64url');

export const hmac = (key: Uint8Array | string, message: Uint8Array | string): Buffer => createHmac('sha256', key).update(message).digest();

export interface Parts {
  readonly parent: string;
  readonly caveats: readonly (string | Uint8Array)[];
  readonly childId?: Buffer;
  readonly version?: number;
  /** What is written as n (default: the number of caveats). */
  readonly count?: number;
  /** The derivation key (default: the right one, from the parent's value). */
  readonly key?: Uint8Array;
}

export const refOf = (parent: string): Buffer => hmac(parent, 'rz-derive-ref-v1').subarray(0, 16);
export const keyOf = (parent: string): Buffer => hmac(parent, 'rz-derive-v1');

/** A child with a correct chain over whatever caveats are given, valid or not. */
export function forge(parts: Parts): string {
  const childId = parts.childId ?? Buffer.alloc(16, 0x42);
  const head = Buffer.concat([Buffer.from([parts.version ?? 1]), refOf(parts.parent), childId]);
  const raws = parts.caveats.map((c) => Buffer.from(c));
  let tag = hmac(parts.key ?? keyOf(parts.parent), head);
  for (const raw of raws) tag = hmac(tag, raw);
  const framed = raws.map((raw) => Buffer.concat([Buffer.from([raw.length >> 8, raw.length & 255]), raw]));
  return tokenOf(Buffer.concat([head, Buffer.from([parts.count ?? raws.length]), ...framed, tag]));
}

export const NOW = 1_800_000_000;
export const apiToken = (): string => generateToken('api');
export const appToken = (): string => generateToken('app');
