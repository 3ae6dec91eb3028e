import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { FieldError } from '../errors.js';
import { packageFile } from '../lib/package-file.js';

/** NIST SP 800-63B-4: a verifier may cap length, but at no less than 64 characters; we allow 1024 bytes. */
export const MAX_PASSWORD_BYTES = 1024;

const BLOCKLIST_FILE = packageFile('assets/common-passwords.txt');

/** Lines per block: a check reads one block, and the index keeps the first line of each. */
const BLOCK_LINES = 64;
/** How much of the file the index is built from at a time. */
const SCAN_BYTES = 64 * 1024;

/** Where the blocks of a list file start, and their first lines, as of one version of the file. */
interface BlockIndex {
  /** The file's size and modification time when it was indexed. */
  readonly size: number;
  readonly mtimeMs: number;
  readonly lines: number;
  /** Byte offset of each block, then the file's size. */
  readonly starts: Float64Array;
  /** Each block's first line, one after another, and where each starts (then where the last ends). */
  readonly heads: Buffer;
  readonly headStarts: Uint32Array;
}

/**
 * Reads a list file once, a piece at a time, checking its order and noting where each block of
 * {@link BLOCK_LINES} lines starts and what its first line is.
 */
function indexFile(file: URL | string): BlockIndex {
  const fd = openSync(file, 'r');
  try {
    const { size, mtimeMs } = fstatSync(fd);
    const starts: number[] = [];
    const heads: Buffer[] = [];
    const chunk = Buffer.allocUnsafe(SCAN_BYTES);
    let carry = Buffer.alloc(0);
    let previous = carry;
    let lines = 0;
    let offset = 0;
    for (let read = readSync(fd, chunk); ; read = readSync(fd, chunk)) {
      const text = read === 0 ? carry : Buffer.concat([carry, chunk.subarray(0, read)]);
      let at = 0;
      // Whole lines only, but for a last line with no newline after it once the file has ended.
      for (let end = text.indexOf(0x0a); end !== -1 || (read === 0 && at < text.length); end = text.indexOf(0x0a, at)) {
        const line = text.subarray(at, end === -1 ? text.length : end);
        if (line.length === 0 || (lines > 0 && Buffer.compare(previous, line) >= 0)) {
          const problem = line.length === 0 ? 'is empty' : 'is out of order or repeated';
          throw new Error(`${String(file)}: line ${lines + 1} ${problem}; the list must be sorted with LC_ALL=C sort -u`);
        }
        if (lines % BLOCK_LINES === 0) {
          starts.push(offset + at);
          heads.push(line);
        }
        previous = line;
        lines++;
        if (end === -1) break;
        at = end + 1;
      }
      if (read === 0) break;
      offset += at;
      carry = text.subarray(at);
    }
    starts.push(size);
    const headStarts = new Uint32Array(heads.length + 1);
    heads.forEach((head, i) => (headStarts[i + 1] = (headStarts[i] ?? 0) + head.length));
    return { size, mtimeMs, lines, starts: Float64Array.from(starts), heads: Buffer.concat(heads), headStarts };
  } finally {
    closeSync(fd);
  }
}

/**
 * A list of strings searched where it lies, in a file of lines sorted in byte order with no
 * duplicates (`LC_ALL=C sort -u`). Memory holds only the first of every 64 lines and where each
 * block of 64 starts, about 30 kB for the shipped 100,000 passwords: the whole list in memory took
 * 1.5 MB for the life of the process, for a check that only signing up and changing a password make.
 * A check bisects the index, then reads its one block (a few kB, from the page cache) and compares
 * bytes. The file is opened for each check and its size and modification time compared with the
 * indexed ones, so a list replaced under a running server is indexed again before it is searched.
 */
export class Blocklist {
  private index: BlockIndex;

  constructor(private readonly file: URL | string) {
    this.index = indexFile(file);
  }

  /** How many entries the list holds. */
  get size(): number {
    return this.current(statSync(this.file)).lines;
  }

  has(value: string): boolean {
    const target = Buffer.from(value, 'utf8');
    if (target.length === 0 || target.includes(0x0a)) return false;
    const fd = openSync(this.file, 'r');
    try {
      const { starts, heads, headStarts } = this.current(fstatSync(fd));
      // The last block whose first line is at most the target.
      let low = 0;
      let high = headStarts.length - 2;
      while (low < high) {
        const mid = (low + high + 1) >>> 1;
        if (heads.compare(target, 0, target.length, headStarts[mid], headStarts[mid + 1]) <= 0) low = mid;
        else high = mid - 1;
      }
      const from = starts[low] ?? 0;
      const block = Buffer.allocUnsafe((starts[low + 1] ?? from) - from);
      readSync(fd, block, 0, block.length, from);
      for (let at = 0; at < block.length; ) {
        const newline = block.indexOf(0x0a, at);
        const end = newline === -1 ? block.length : newline;
        const order = block.compare(target, 0, target.length, at, end);
        if (order === 0) return true;
        if (order > 0) return false;
        at = end + 1;
      }
      return false;
    } finally {
      closeSync(fd);
    }
  }

  private current(stats: { size: number; mtimeMs: number }): BlockIndex {
    if (this.index.size !== stats.size || this.index.mtimeMs !== stats.mtimeMs) this.index = indexFile(this.file);
    return this.index;
  }
}

/** The shipped blocklist of common and breached passwords (lower-cased). */
export function loadBlocklist(file: URL | string = BLOCKLIST_FILE): Blocklist {
  return new Blocklist(file);
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
