import { readFileSync } from 'node:fs';
import type { FieldError } from '../errors.js';
import { packageFile } from '../lib/package-file.js';
import { SortedStrings } from '../lib/sorted-strings.js';
import { codePoints } from '../lib/text.js';

/** NIST SP 800-63B-4: a verifier may cap length, but at no less than 64 characters; we allow 1024 bytes. */
export const MAX_PASSWORD_BYTES = 1024;

const BLOCKLIST_FILE = packageFile('assets/common-passwords.txt');

/** A list file: one entry per line, in any order; empty lines are ignored. */
export function readBlocklist(file: URL | string): SortedStrings {
  const lines = readFileSync(file, 'utf8').split('\n');
  return new SortedStrings(lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line)).filter((entry) => entry !== ''));
}

let shipped: SortedStrings | undefined;

/** The shipped list of common and breached passwords (lower-cased), read into memory once per process. */
export function loadBlocklist(): SortedStrings {
  shipped ??= readBlocklist(BLOCKLIST_FILE);
  return shipped;
}

/**
 * The most code points whose NFKC form can fit {@link MAX_PASSWORD_BYTES}: normalizing never leaves
 * fewer than 2 bytes for every 3 code points (three make U+01D5, which takes two).
 */
const MAX_NORMALIZABLE_CODE_POINTS = (MAX_PASSWORD_BYTES * 3) / 2;

/**
 * Passwords are compared in NFKC so that visually identical input typed on different keyboards
 * hashes the same. Nothing is trimmed or truncated. Input too long to fit the byte cap once
 * normalized is returned as it is, for the cap to refuse: normalizing is quadratic in a run of
 * combining marks, and runs before the password is checked.
 */
export const normalizePassword = (password: string): string =>
  password.length > MAX_NORMALIZABLE_CODE_POINTS && codePoints(password) > MAX_NORMALIZABLE_CODE_POINTS ? password : password.normalize('NFKC');

export interface PasswordContext {
  readonly minLength: number;
  readonly blocklist: { has(value: string): boolean };
  readonly email: string;
  readonly username: string;
}

/**
 * The NIST rules: a minimum length in characters, a byte cap, no composition rules, and not a
 * common password or one derived from the account's own identifiers. Takes a normalized password.
 */
export function checkPassword(password: string, context: PasswordContext): FieldError | null {
  const fail = (message: string): FieldError => ({ field: 'password', message });
  const length = [...password].length;
  if (length < context.minLength) return fail(`must be at least ${context.minLength} characters long`);
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return fail(`must be at most ${MAX_PASSWORD_BYTES} bytes`);
  // Control characters are never typed on purpose; they are a sign of injection or a broken client.
  if (/[\u0000-\u001f\u007f]/.test(password)) return fail('must not contain control characters');
  const lower = password.toLowerCase();
  if (context.blocklist.has(lower)) return fail('is too common: it appears in lists of breached passwords');
  const identifiers = [context.email, context.email.split('@')[0] ?? '', context.username.toLowerCase()];
  if (identifiers.some((id) => id.length >= 3 && lower === id)) return fail('must not be your email or username');
  if (new Set(password).size === 1) return fail('must not repeat a single character');
  return null;
}
