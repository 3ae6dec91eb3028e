/** RFC 6750 §2.1 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** Longer than any rz-auth token (a JWT is at most 2048 characters). */
export const MAX_TOKEN_LENGTH = 4096;
const PREFIX = 'Bearer ';

export type ParsedHeader =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly code: 'unauthorized' | 'invalid_request' | 'invalid_token' };

/**
 * The token of an Authorization value: exactly `Bearer`, one space, a b64token (RFC 6750 §2.1).
 * Runs on untrusted input before anything else, so the length is checked first and the one regular
 * expression (linear: no nested quantifier) only ever sees a bounded value.
 *
 * - no header, or another scheme: `unauthorized` (RFC 6750 §3.1: no error code without credentials);
 * - several Authorization headers, or `Bearer` not followed by exactly one space and a token:
 *   `invalid_request`;
 * - a token too long or outside the b64token alphabet: `invalid_token`.
 *
 * The scheme name is compared case-insensitively, as RFC 9110 §11.1 requires of every scheme.
 */
export function parseAuthorization(header: string | readonly string[] | undefined): ParsedHeader {
  if (typeof header !== 'string') {
    if (header === undefined || header.length === 0) return { ok: false, code: 'unauthorized' };
    if (header.length > 1) return { ok: false, code: 'invalid_request' };
    return parseAuthorization(header[0]);
  }
  if (header.length === 0) return { ok: false, code: 'unauthorized' };
  if (header.length > PREFIX.length + MAX_TOKEN_LENGTH) return { ok: false, code: 'invalid_token' };
  if (!header.startsWith(PREFIX)) {
    const scheme = header.slice(0, PREFIX.length).toLowerCase();
    if (scheme === 'bearer ') return parseAuthorization(PREFIX + header.slice(PREFIX.length));
    // "Bearer" alone or followed by a tab is a malformed Bearer credential, not another scheme.
    return scheme === 'bearer' || scheme === 'bearer\t' ? { ok: false, code: 'invalid_request' } : { ok: false, code: 'unauthorized' };
  }
  const token = header.slice(PREFIX.length);
  if (token.length === 0 || token.charCodeAt(0) === 0x20) return { ok: false, code: 'invalid_request' };
  return B64TOKEN.test(token) ? { ok: true, token } : { ok: false, code: 'invalid_token' };
}

/**
 * The Authorization header of a Node request as {@link parseAuthorization} takes it: Node keeps
 * only the first of several in `headers`, so the raw list is counted to refuse duplicates.
 */
export function authorizationOf(req: { headers: { authorization?: string | undefined }; rawHeaders?: readonly string[] }): string | string[] | undefined {
  const raw = req.rawHeaders;
  if (raw === undefined) return req.headers.authorization;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if (name !== undefined && name.length === 13 && name.toLowerCase() === 'authorization') values.push(raw[i + 1] ?? '');
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}
