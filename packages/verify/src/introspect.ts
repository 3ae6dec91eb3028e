import { discard, type Fetch, fetchUntil, readBounded } from './bounded.js';
import type { Caller } from './caller.js';
import { CredentialRefused, refusesCredential } from './errors.js';
import { isNetworkList } from './networks.js';
import { traceHeaders } from './trace-context.js';
// Type-only, and generated from rz-auth's OpenAPI document at build time: nothing of it is in the
// published package, whose answers are still checked value by value (they are not trusted).
import type { Answer } from '../../../types/api.js';

/** An active answer's members, by the document's names, each of a type still to be checked. */
type Unchecked = { readonly [Name in keyof Answer<'introspectToken'>]?: unknown };
type TokenType = NonNullable<Answer<'introspectToken'>['token_type']>;

/** The outcome of one introspection: a caller, inactive, or no usable answer. */
export type Introspection = { readonly active: true; readonly caller: Caller } | { readonly active: false } | { readonly unavailable: unknown };

const TOKEN_TYPES: ReadonlySet<unknown> = new Set<TokenType>(['user', 'api_token', 'app_token']);
const isTokenType = (value: unknown): value is TokenType => TOKEN_TYPES.has(value);

/** The last second of year 9999: an `exp` past it, or not a whole positive number, is no date. */
const MAX_EXP = 253_402_300_799;
const isEpoch = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= MAX_EXP;

/**
 * The caller an active RFC 7662 answer describes, or null when the answer is not the shape
 * rz-auth sends (a proxy's page, a newer server): such an answer is never taken as a yes. It is
 * frozen: cached, the same object serves every request with the token, so a handler that changed
 * it would change what the next request is allowed.
 */
function callerOf(body: Unchecked): Caller | null {
  const { token_type: type, sub, jti, scope, exp, username, client_id: appId, allowed_cidrs: networks } = body;
  if (!isTokenType(type) || typeof sub !== 'string' || typeof jti !== 'string' || typeof scope !== 'string') return null;
  // An expiry we cannot read (1e300 is an Invalid Date) would leave the token's lifetime unbounded.
  if ((exp !== undefined && !isEpoch(exp)) || (username !== undefined && typeof username !== 'string')) return null;
  if (type === 'app_token' ? typeof appId !== 'string' : appId !== undefined) return null;
  // A list we cannot read could admit nobody or anybody: no answer to trust.
  if (networks !== undefined && !isNetworkList(networks)) return null;
  return Object.freeze({
    userId: sub,
    tokenType: type,
    tokenId: jti,
    scopes: Object.freeze(scope === '' ? [] : scope.split(' ')),
    ...(typeof appId === 'string' ? { appId } : {}),
    ...(typeof username === 'string' ? { username } : {}),
    ...(isEpoch(exp) ? { expiresAt: new Date(exp * 1000) } : {}),
    ...(networks === undefined ? {} : { allowedCidrs: Object.freeze([...networks]) }),
  });
}

/**
 * POST /api/introspect with the service credential. Any answer but a 200 of the documented shape
 * (a network error, a timeout, a redirect, 429, 5xx, a body past `MAX_ANSWER_BYTES`) is
 * `unavailable`: the caller fails closed on it. A 401 or 403 is unavailable too, with a
 * {@link CredentialRefused} as the reason, so that the caller can say what is wrong.
 */
export async function introspect(fetchFn: Fetch, base: string, serviceToken: string, token: string, timeoutMs: number): Promise<Introspection> {
  try {
    const signal = AbortSignal.timeout(timeoutMs);
    const res = await fetchUntil(fetchFn, `${base}/api/introspect`, {
      method: 'POST',
      // The trace context first: nothing it holds can replace the credential or the content type.
      headers: { ...(await traceHeaders()), authorization: `Bearer ${serviceToken}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ token }).toString(),
      signal,
      // Following one would send the token being checked to another origin and trust its answer.
      redirect: 'error',
    });
    if (refusesCredential(res.status) && !res.redirected) {
      discard(res);
      return { unavailable: new CredentialRefused('POST /api/introspect', res.status) };
    }
    // `redirected` catches a custom fetch that followed one anyway.
    if (res.status !== 200 || res.redirected) {
      discard(res);
      return { unavailable: new Error(`POST /api/introspect answered ${res.status}${res.redirected ? ' after a redirect' : ''}`) };
    }
    const body = JSON.parse(await readBounded(res, signal)) as unknown;
    if (typeof body !== 'object' || body === null) return { unavailable: new Error('POST /api/introspect answered no JSON object') };
    const record = body as Unchecked;
    if (record.active === false) return { active: false };
    const caller = record.active === true ? callerOf(record) : null;
    return caller ? { active: true, caller } : { unavailable: new Error('POST /api/introspect answered an unexpected shape') };
  } catch (error) {
    return { unavailable: error };
  }
}
