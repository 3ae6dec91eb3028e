import { readFileSync } from 'node:fs';
import type { FieldError } from '../errors.js';
import { packageFile } from '../lib/package-file.js';

/** NIST SP 800-63B-4: a verifier may cap length, but at no less than 64 characters; we allow 1024 bytes. */
export const MAX_PASSWORD_BYTES = 1024;

const BLOCKLIST_FILE = packageFile('assets/common-passwords.txt');

/**
 * A set of strings kept as one sorted, newline-joined string plus line offsets, searched by
 * bisection: about 1.5 MB for the shipped 100,000 passwords instead of about 10 MB as a Set.
 */
export class Blocklist {
  private readonly text: string;
  private readonly starts: Uint32Array;

  constructor(entries: Iterable<string>) {
    const sorted = [...new Set(entries)].filter((e) => e !== '').sort();
    this.text = sorted.join('\n');
    this.starts = new Uint32Array(sorted.length + 1);
    let offset = 0;
    sorted.forEach((entry, i) => {
      this.starts[i] = offset;
      offset += entry.length + 1;
    });
    this.starts[sorted.length] = offset;
  }

  get size(): number {
    return this.starts.length - 1;
  }

  has(value: string): boolean {
    let low = 0;
    let high = this.size - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const entry = this.text.slice(this.starts[mid], (this.starts[mid + 1] ?? 0) - 1);
      if (entry === value) return true;
      if (entry < value) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }
}

/** Loads the shipped blocklist of common and breached passwords (lower-cased). */
export function loadBlocklist(file: URL = BLOCKLIST_FILE): Blocklist {
  return new Blocklist(readFileSync(file, 'utf8').split('\n'));
}

/**
 * Passwords are compared in NFKC so that visually identical input typed on different keyboards
 * hashes the same. Nothing is trimmed or truncated.
 */
export const normalizePassword = (password: string): string => password.normalize('NFKC');

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
