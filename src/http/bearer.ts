import type { IncomingMessage } from 'node:http';
import { invalidRequest, invalidToken, MAX_TOKEN_LENGTH, unauthorized } from '../errors.js';
import { countHeader } from './framing.js';

/** RFC 6750 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const SP = 0x20;
const HTAB = 0x09;
const BEARER = 'bearer';

const AUTHORIZATION = 'authorization';

/** RFC 9110 tchar: what an auth-scheme is made of. */
function isTchar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x30 && code <= 0x39) || // 0-9
    "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code))
  );
}

/**
 * The token of an `Authorization` value, `auth-scheme 1*SP token68` (RFC 9110 §11.4, RFC 6750
 * §2.1). Runs before the request is authenticated or counted, so it is one pass over the value
 * with index scans, never a regular expression that could backtrack over a long run of spaces; the
 * one expression left (the token's alphabet) runs only on a value already length-checked.
 *
 * Optional whitespace around the whole value (SP and HTAB: `String.prototype.trim` would also
 * strip NBSP, line breaks and BOMs) is skipped; between scheme and token only spaces count: a tab
 * there, or anything else after the scheme, makes it no Bearer credential at all.
 */
export function parseBearer(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === SP || value.charCodeAt(start) === HTAB)) start++;
  while (end > start && (value.charCodeAt(end - 1) === SP || value.charCodeAt(end - 1) === HTAB)) end--;

  let at = start;
  while (at < end && at - start <= BEARER.length && isTchar(value.charCodeAt(at))) at++;
  // The scheme name is case-insensitive (RFC 9110 §11.1); anything but Bearer is another scheme.
  if (at - start !== BEARER.length || value.slice(start, at).toLowerCase() !== BEARER) throw unauthorized();
  if (at < end && value.charCodeAt(at) !== SP) throw unauthorized();
  while (at < end && value.charCodeAt(at) === SP) at++;

  if (end - at > MAX_TOKEN_LENGTH) throw invalidToken();
  const token = value.slice(at, end);
  if (!B64TOKEN.test(token)) throw invalidToken();
  return token;
}

/**
 * The bearer token of a request, per RFC 6750 §2.1. Only the Authorization header counts: tokens in
 * the query string or in cookies are never read.
 *
 * @throws unauthorized when there is no header or another scheme; invalid_request for more than one
 * header (Node keeps only the first in `req.headers`, so `rawHeaders` is counted); invalid_token for
 * a malformed token.
 */
export function readBearerToken(req: IncomingMessage): string {
  const value = req.headers.authorization;
  if (value === undefined) throw unauthorized();
  if (countHeader(req.rawHeaders, AUTHORIZATION) > 1) throw invalidRequest('Send exactly one Authorization header.');
  return parseBearer(value);
}
