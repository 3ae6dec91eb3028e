/** RFC 6750 §2.1 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** Longer than any rz-auth token (a JWT is at most 2048 characters). */
export const MAX_TOKEN_LENGTH = 4096;
const SP = 0x20;
const HTAB = 0x09;
const BEARER = 'bearer';

export type ParsedHeader =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly code: 'unauthorized' | 'invalid_request' | 'invalid_token' };

const UNAUTHORIZED: ParsedHeader = { ok: false, code: 'unauthorized' };
const INVALID_TOKEN: ParsedHeader = { ok: false, code: 'invalid_token' };

/** RFC 9110 tchar: what an auth-scheme is made of. */
function isTchar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code));
}

/**
 * The token of an Authorization value, `auth-scheme 1*SP token68` (RFC 9110 §11.4, RFC 6750 §2.1),
 * read by the same rules as rz-auth reads it, so a header gets the same answer from a service as
 * from rz-auth itself. Runs on untrusted input before anything else: one pass of index scans, and
 * the one regular expression (linear: no nested quantifier) only ever sees a length-checked value.
 *
 * - no header, or no Bearer credential (another scheme, the scheme glued to what follows, a tab
 *   between scheme and token): `unauthorized` (RFC 6750 §3.1: no error code without credentials);
 * - several Authorization headers: `invalid_request`;
 * - `Bearer` with no token, a token too long or outside the b64token alphabet: `invalid_token`.
 *
 * Optional whitespace (SP, HTAB) around the whole value is skipped; between scheme and token one or
 * more spaces. The scheme name is compared case-insensitively, as RFC 9110 §11.1 requires.
 */
export function parseAuthorization(header: string | readonly string[] | undefined): ParsedHeader {
  if (typeof header !== 'string') {
    if (header === undefined || header.length === 0) return UNAUTHORIZED;
    if (header.length > 1) return { ok: false, code: 'invalid_request' };
    return parseAuthorization(header[0]);
  }
  let start = 0;
  let end = header.length;
  while (start < end && (header.charCodeAt(start) === SP || header.charCodeAt(start) === HTAB)) start++;
  while (end > start && (header.charCodeAt(end - 1) === SP || header.charCodeAt(end - 1) === HTAB)) end--;

  let at = start;
  while (at < end && at - start <= BEARER.length && isTchar(header.charCodeAt(at))) at++;
  if (at - start !== BEARER.length || header.slice(start, at).toLowerCase() !== BEARER) return UNAUTHORIZED;
  if (at < end && header.charCodeAt(at) !== SP) return UNAUTHORIZED;
  while (at < end && header.charCodeAt(at) === SP) at++;

  if (end - at > MAX_TOKEN_LENGTH) return INVALID_TOKEN;
  const token = header.slice(at, end);
  return B64TOKEN.test(token) ? { ok: true, token } : INVALID_TOKEN;
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
