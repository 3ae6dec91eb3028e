import { createRemoteJWKSet, customFetch, errors, jwtVerify } from 'jose';
import { bounded, discard, type Fetch, fetchUntil } from './bounded.js';
import { CredentialRefused, refusesCredential } from './errors.js';

/** What rz-auth signs user tokens with (RFC 8725: one algorithm, never the token's choice). */
const ALGORITHM = 'EdDSA';
/** Compact JWS only, and no longer than rz-auth's own limit: anything else never reaches a parser. */
const COMPACT_JWS = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_JWT_LENGTH = 2048;

/** jose's codes for a token that is wrong, as opposed to a JWKS that could not be had. */
const INVALID = new Set([
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JWS_INVALID',
  'ERR_JWT_INVALID',
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
]);

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** By a segment's length mod 4, the bits of its last character that encode no byte (RFC 4648 §3.5); -1 for a length no encoder writes. */
const SPARE_BITS = [0, -1, 0b1111, 0b11] as const;

/**
 * True when every segment is spelled as an encoder writes it (spare bits zero), as rz-auth
 * requires: decoders ignore those bits, so jose would take up to sixteen spellings of one token,
 * each costing an introspection that rz-auth then refuses, and a service that deny-lists a token
 * string could be passed another spelling.
 */
function isCanonical(token: string): boolean {
  let start = 0;
  for (;;) {
    const dot = token.indexOf('.', start);
    const end = dot === -1 ? token.length : dot;
    const spare = SPARE_BITS[(end - start) % 4] ?? -1;
    if (spare === -1 || (spare !== 0 && (BASE64URL.indexOf(token.charAt(end - 1)) & spare) !== 0)) return false;
    if (dot === -1) return true;
    start = dot + 1;
  }
}

export const looksLikeJwt = (token: string): boolean => token.length <= MAX_JWT_LENGTH && COMPACT_JWS.test(token) && isCanonical(token);

export interface JwtClaims {
  readonly sub: string;
  readonly sid: string;
  readonly exp: number;
  /** RFC 8176 methods; `['pwd']` when absent (a token from before rz-auth wrote them, as rz-auth reads it). */
  readonly amr: readonly string[];
  /** Seconds since the epoch; `iat` when absent (likewise). */
  readonly authTime: number;
}

/** rz-auth writes at most its six methods (contract §12.4); a longer list is no token of its. */
const MAX_AMR = 6;
const isAmr = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.length <= MAX_AMR && value.every((m) => typeof m === 'string' && /^[a-z]{1,8}$/.test(m));
const isSeconds = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

export type JwtCheck = { readonly valid: true; readonly claims: JwtClaims } | { readonly valid: false } | { readonly unavailable: unknown };

export interface JwtOptions {
  readonly issuer: string;
  readonly audience: string;
  /** Least time between two JWKS fetches caused by an unknown `kid`. */
  readonly cooldownMs: number;
  readonly timeoutMs: number;
  readonly fetch: Fetch;
}

/**
 * Offline verification of rz-auth's user tokens against its JWKS. The key set is fetched once,
 * then again only for a `kid` it does not hold (at most once per cooldown, so forged kids cannot
 * make us hammer rz-auth) or when rz-auth announces a rotation ({@link reload}).
 */
export class JwtVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(
    base: string,
    private readonly options: JwtOptions,
  ) {
    const fetchFn = options.fetch;
    this.jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`), {
      cooldownDuration: options.cooldownMs,
      timeoutDuration: options.timeoutMs,
      // Never a key set from another origin: a redirect (or a fetch that followed one) is no answer.
      [customFetch]: async (url, init) => {
        const signal = init.signal ?? AbortSignal.timeout(options.timeoutMs);
        const res = await fetchUntil(fetchFn, url, { ...init, signal, redirect: 'error' });
        if (res.redirected) {
          discard(res);
          throw new Error(`${url} was redirected`);
        }
        if (refusesCredential(res.status)) {
          discard(res);
          throw new CredentialRefused('GET /.well-known/jwks.json', res.status);
        }
        return bounded(res, signal);
      },
    });
  }

  async verify(token: string): Promise<JwtCheck> {
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        algorithms: [ALGORITHM],
        typ: 'JWT',
        issuer: this.options.issuer,
        audience: this.options.audience,
        requiredClaims: ['sub', 'sid', 'jti', 'iat', 'exp'],
      });
      const { sub, sid, exp, iat, amr = ['pwd'], auth_time: authTime = iat } = payload;
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number') return { valid: false };
      // Signed by rz-auth, yet checked: a step-up decision must never rest on a value it cannot read.
      if (!isAmr(amr) || !isSeconds(authTime)) return { valid: false };
      return { valid: true, claims: { sub, sid, exp, amr: Object.freeze([...amr]), authTime } };
    } catch (error) {
      return error instanceof errors.JOSEError && INVALID.has(error.code) ? { valid: false } : { unavailable: error };
    }
  }

  /**
   * Fetches the key set again now (rz-auth rotated its keys); settles once the new set is in use,
   * or once fetching it failed (the next use tries again).
   */
  reload(): Promise<void> {
    return this.jwks.reload().catch(() => undefined);
  }
}
