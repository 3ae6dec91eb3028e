import { createHmac, KeyObject, sign } from 'node:crypto';
import type { CryptoKey } from 'jose';

/**
 * Hand-built JWS for forgery tests. jose refuses to produce most hostile tokens (alg none, unknown
 * `crit`, numeric `kid`), so these helpers assemble the compact form themselves.
 */

export type Json = Record<string, unknown>;

export const b64url = (value: string | Buffer | Json): string =>
  (typeof value === 'string' || Buffer.isBuffer(value) ? Buffer.from(value) : Buffer.from(JSON.stringify(value))).toString('base64url');

/** The three segments of a compact JWS, decoded where they are JSON. */
export function split(token: string): { header: Json; payload: Json; signature: string; signingInput: string } {
  const [h = '', p = '', signature = ''] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Json,
    payload: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Json,
    signature,
    signingInput: `${h}.${p}`,
  };
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Every other base64url spelling of the same bytes: the last character with other values in the
 * bits no byte uses (4 bits when the length is 2 mod 4, 2 bits when it is 3 mod 4). Decoders ignore
 * those bits, so each spelling decodes to exactly the bytes of `segment`.
 */
export function respellings(segment: string): string[] {
  const unused = [0, 0, 4, 2][segment.length % 4] ?? 0;
  const last = BASE64URL.indexOf(segment.slice(-1));
  const others: string[] = [];
  for (let bits = 0; bits < 1 << unused; bits++) {
    const value = (last & ~((1 << unused) - 1)) | bits;
    if (value !== last) others.push(segment.slice(0, -1) + BASE64URL.charAt(value));
  }
  return others;
}

/** header.payload.signature with a signature supplied verbatim. */
export const assemble = (header: Json, payload: Json, signature: string): string => `${b64url(header)}.${b64url(payload)}.${signature}`;

/** A real Ed25519 signature over exactly the given header and payload. */
export const signEd25519 = (header: Json, payload: Json, key: CryptoKey | KeyObject): string => signInput(`${b64url(header)}.${b64url(payload)}`, key);

/** `input` (header.payload, spelled as given) with a real Ed25519 signature over it appended. */
export function signInput(input: string, key: CryptoKey | KeyObject): string {
  const keyObject = key instanceof KeyObject ? key : KeyObject.from(key);
  return `${input}.${sign(null, Buffer.from(input), keyObject).toString('base64url')}`;
}

/** An HMAC-SHA256 signature: the classic key-confusion forgery when `secret` is public key material. */
export function signHs256(header: Json, payload: Json, secret: string | Buffer): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** Headers whose values legitimately differ from one request to the next (their names must not). */
const PER_REQUEST = new Set(['x-request-id', 'date', 'ratelimit']);

/**
 * The response with what legitimately differs per request masked (the request id in the body, and
 * the values of {@link PER_REQUEST} headers), for byte-level comparison of two responses.
 */
export function comparable(res: { body: string; headers: Record<string, unknown> }): { body: string; headers: Json } {
  const requestId = String(res.headers['x-request-id']);
  const headers = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, PER_REQUEST.has(name) ? '<varies>' : value]));
  return { body: res.body.replaceAll(requestId, '<request-id>'), headers };
}
