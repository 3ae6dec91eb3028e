import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { KeyRing } from '../keys/service.js';
import { JWT_ALG } from '../keys/service.js';
import { type Authentication, type AuthMethod, isAuthMethods } from '../lib/amr.js';

/** The claims rz-auth puts in a user token: identifiers only, never personal data. */
export interface UserClaims {
  readonly sub: string;
  readonly sid: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly kid: string;
  /** RFC 8176 methods of the authentication behind the token (contract §12.4). */
  readonly amr: readonly AuthMethod[];
  /** Seconds since the epoch: the last primary or step-up authentication. */
  readonly authTime: number;
  /** Audience {@link ENROLL_AUDIENCE}: good only for enrolling a second factor (contract §12.7). */
  readonly enrollOnly: boolean;
  /**
   * Milliseconds since the epoch: the earlier of `exp` and the end of the signing key's window,
   * which is how long a cached verification may be trusted.
   */
  readonly validUntil: number;
}

export interface JwtSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly ttlSeconds: number;
}

/**
 * The audience of the token a user who must enrol a second factor gets at login (contract §12.7,
 * MFA_REQUIRED): rz-auth accepts it on the enrolment routes only, and every other service refuses
 * it because it is not their audience (JWT_AUDIENCE).
 */
export const ENROLL_AUDIENCE = 'rz-auth:enroll';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Compact JWS only: three base64url segments, header starting `eyJ`. Anything else never reaches a parser. */
export const COMPACT_JWS = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const MAX_JWT_LENGTH = 2048;
/** The longest user token lifetime (the upper bound of JWT_TTL_SECONDS). */
export const MAX_TTL_SECONDS = 7 * 24 * 3600;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/**
 * By a segment's length mod 4, the bits of its last character that encode no byte (RFC 4648,
 * section 3.5); -1 for the length no encoder writes.
 */
const SPARE_BITS = [0, -1, 0b1111, 0b11] as const;

/**
 * True when every segment of a compact JWS is spelled as an encoder writes it: spare bits zero.
 * Decoders ignore those bits, so without this check one token would have up to sixteen spellings
 * that verify, and a service that deny-lists a token string could be passed another spelling.
 * Constant work per segment, after the length and alphabet checks.
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

/** Signs and verifies user tokens (RFC 8725: one algorithm, explicit type, required claims). */
export class UserTokens {
  constructor(
    private readonly keys: KeyRing,
    private readonly settings: JwtSettings,
  ) {}

  /** `auth`: how the user authenticated; a password login at `nowMs` when not given. */
  async issue(userId: string, sessionId: string, nowMs: number, auth?: Authentication, enrollOnly = false): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(nowMs / 1000);
    const exp = iat + this.settings.ttlSeconds;
    const { kid, key } = this.keys.signingKey();
    const amr = auth?.amr ?? ['pwd'];
    const authTime = auth === undefined ? iat : Math.floor(auth.authTime / 1000);
    const token = await new SignJWT({ sid: sessionId, amr: [...amr], auth_time: authTime })
      .setProtectedHeader({ alg: JWT_ALG, typ: 'JWT', kid })
      .setIssuer(this.settings.issuer)
      .setAudience(enrollOnly ? ENROLL_AUDIENCE : this.settings.audience)
      .setSubject(userId)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key);
    return { token, expiresAt: exp * 1000 };
  }

  /**
   * Verifies signature and claims. Returns null for any failure: callers answer every failure
   * with the same invalid_token response, so the reason is deliberately dropped.
   */
  async verify(token: string, nowMs: number): Promise<UserClaims | null> {
    if (token.length > MAX_JWT_LENGTH || !COMPACT_JWS.test(token) || !isCanonical(token)) return null;
    try {
      let keyUntil = 0;
      const { payload, protectedHeader } = await jwtVerify(
        token,
        // The key comes only from our own key ring by kid: embedded jwk/jku/x5u headers are ignored.
        (header) => {
          const verifier = typeof header.kid === 'string' ? this.keys.verifier(header.kid) : undefined;
          if (!verifier) throw new Error('unknown kid');
          keyUntil = verifier.verifiesUntil;
          return verifier.publicKey;
        },
        {
          algorithms: [JWT_ALG],
          typ: 'JWT',
          issuer: this.settings.issuer,
          audience: [this.settings.audience, ENROLL_AUDIENCE],
          requiredClaims: ['sub', 'sid', 'jti', 'iat', 'exp'],
          currentDate: new Date(nowMs),
        },
      );
      const { sub, sid, jti, iat, exp, amr, auth_time: authTime, aud } = payload;
      if (typeof sub !== 'string' || !UUID.test(sub) || typeof sid !== 'string' || !UUID.test(sid)) return null;
      if (typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number' || !Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return null;
      // A token issued in the future was not issued by us (allow a little clock skew between instances).
      if (iat < 0 || iat * 1000 > nowMs + 60_000) return null;
      // Nor one living longer than JWT_TTL_SECONDS can be set to: its expiry is a date we can write.
      if (exp <= iat || exp - iat > MAX_TTL_SECONDS) return null;
      // Tokens issued before second factors carry neither: a password login when they were issued.
      if (amr !== undefined && !isAuthMethods(amr)) return null;
      if (authTime !== undefined && (typeof authTime !== 'number' || !Number.isSafeInteger(authTime) || authTime < 0 || authTime > iat)) return null;
      const auth = { amr: amr ?? (['pwd'] as AuthMethod[]), authTime: authTime ?? iat };
      // Any mention of the enrolment audience restricts the token, whatever else it names.
      const enrollOnly = aud === ENROLL_AUDIENCE || (Array.isArray(aud) && aud.includes(ENROLL_AUDIENCE));
      return { sub, sid, jti, iat, exp, kid: protectedHeader.kid as string, validUntil: Math.min(exp * 1000, keyUntil), enrollOnly, ...auth };
    } catch {
      return null;
    }
  }
}
