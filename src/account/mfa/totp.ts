import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/*
 * TOTP (RFC 6238) as authenticator apps read it: SHA-1, 6 digits, 30-second steps (contract §12.3).
 * The HMAC key is the secret's raw bytes; base32 is only how it travels in the otpauth:// URI.
 */

const PERIOD_S = 30;
const DIGITS = 6;
/** RFC 4226 §4 R6 recommends a 160-bit shared secret. */
const SECRET_BYTES = 20;
/** Steps T−1, T and T+1: one step of clock drift either way (RFC 6238 §5.2, contract §12.6). */
const WINDOW = 1;
/** Longer input is refused before any work on it. */
const MAX_INPUT = 64;

/** A new TOTP secret, base32 (32 characters). `random` is a CSPRNG; tests pass a fixed one. */
export function newTotpSecret(random: (size: number) => Buffer = randomBytes): string {
  return new Secret({ buffer: new Uint8Array(random(SECRET_BYTES)).buffer }).base32;
}

/**
 * The Key URI an authenticator app scans, in the contract's form:
 * `otpauth://totp/<issuer>:<username>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`.
 */
export function otpauthUri(issuer: string, username: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(username)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${DIGITS}&period=${PERIOD_S}`;
}

/**
 * The code as compared: exactly six ASCII digits once spaces (U+0020) are removed, so `12 34 56`
 * is `123456`. Anything else is null: other digit characters (full-width `１２３４５６`), signs,
 * five or seven digits (contract §12.6, §12.10).
 */
export function normalizeTotpCode(input: string): string | null {
  if (input.length > MAX_INPUT) return null;
  const code = input.replaceAll(' ', '');
  return /^[0-9]{6}$/.test(code) ? code : null;
}

/** The time step of an instant: floor(unix seconds / 30) (RFC 6238 §4.2). */
export const totpStep = (nowMs: number): number => Math.floor(nowMs / 1000 / PERIOD_S);

/**
 * The step within T−1…T+1 whose code `code` (already normalised) is, or null. otpauth compares each
 * candidate in constant time.
 */
export function matchingStep(secret: string, code: string, nowMs: number): number | null {
  const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD_S, timestamp: nowMs, window: WINDOW });
  return delta === null ? null : totpStep(nowMs) + delta;
}

/** The code of `secret` at an instant: for tests and for nothing on a request path. */
export const totpCodeAt = (secret: string, atMs: number): string =>
  TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: DIGITS, period: PERIOD_S, timestamp: atMs });
