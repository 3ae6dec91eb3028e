import type { IncomingMessage } from 'node:http';
import { invalidRequest, invalidToken, unauthorized } from '../errors.js';

/** RFC 6750 b64token; no real token of ours is longer than a JWT can be. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 4096;
/** `auth-scheme 1*SP token`: an RFC 9110 token for the scheme, then at least one space (tabs tolerated). */
const CREDENTIALS = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:[ \t]+(.*))?$/s;
/**
 * HTTP's optional whitespace is SP and HTAB only. `String.prototype.trim` also strips NBSP, line
 * breaks and BOMs, which would let `<token>\u00a0` through as a valid token.
 */
const OWS_AROUND = /^[ \t]+|[ \t]+$/g;

const AUTHORIZATION = 'authorization';

function countAuthorizationHeaders(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    // Lowercasing only the names of the right length: every request has a few other headers.
    if (name?.length === AUTHORIZATION.length && name.toLowerCase() === AUTHORIZATION) count++;
  }
  return count;
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
  if (countAuthorizationHeaders(req.rawHeaders) > 1) throw invalidRequest('Send exactly one Authorization header.');
  const match = CREDENTIALS.exec(value.replace(OWS_AROUND, ''));
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  if (!match || match[1]?.toLowerCase() !== 'bearer') throw unauthorized();
  const token = match[2] ?? '';
  if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) throw invalidToken();
  return token;
}

/**
 * The token of a request whose one Authorization header is exactly `Bearer <token>`, without
 * validating the token: only for looking it up among tokens already validated (a cache), where a
 * hit proves it well-formed and {@link readBearerToken} would return the same string. Undefined
 * for anything else, which then goes through {@link readBearerToken}.
 */
export function plainBearerToken(req: IncomingMessage): string | undefined {
  const value = req.headers.authorization;
  if (value === undefined || !value.startsWith('Bearer ') || countAuthorizationHeaders(req.rawHeaders) > 1) return undefined;
  return value.slice(7);
}
