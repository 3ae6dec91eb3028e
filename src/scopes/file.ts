import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { MAX_PLATFORM_SCOPES, SCOPE_NAME as SCOPE_NAME_SOURCE, SCOPES } from '../tokens/scopes.js';

/** The token types a platform scope may be given to. */
export const SCOPE_TOKEN_TYPES = ['api_token', 'app_token'] as const;
export type ScopeTokenType = (typeof SCOPE_TOKEN_TYPES)[number];

/** One scope the operator declared in `SCOPES_FILE`. */
export interface PlatformScope {
  readonly name: string;
  readonly description: string;
  readonly tokenTypes: readonly ScopeTokenType[];
}

/** `service:action` or `service:resource:action`; bounded repetitions only, so checking is linear. */
const SCOPE_NAME = new RegExp(`^${SCOPE_NAME_SOURCE}$`);
export const MAX_DESCRIPTION_LENGTH = 300;
/** Far above 500 entries of the longest names and descriptions: a bigger file is a mistake. */
export const MAX_FILE_BYTES = 1024 * 1024;

const ENTRY_KEYS = new Set(['name', 'description', 'token_types']);
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A refusal of the file, naming the entry (and the field) at fault. */
export class ScopesFileError extends Error {
  override name = 'ScopesFileError';
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parseTokenTypes(value: unknown, where: string): readonly ScopeTokenType[] {
  if (value === undefined) return SCOPE_TOKEN_TYPES;
  const allowed: readonly unknown[] = SCOPE_TOKEN_TYPES;
  if (!Array.isArray(value) || value.length === 0 || !value.every((t) => allowed.includes(t))) {
    throw new ScopesFileError(`${where}: token_types must be a non-empty list of "api_token" and "app_token"`);
  }
  if (new Set(value).size !== value.length) throw new ScopesFileError(`${where}: token_types lists a type twice`);
  return SCOPE_TOKEN_TYPES.filter((t) => value.includes(t));
}

function parseEntry(entry: unknown, index: number, seen: Set<string>): PlatformScope {
  const at = `scopes[${index}]`;
  if (!isObject(entry)) throw new ScopesFileError(`${at}: must be an object with name, description and optional token_types`);
  const { name, description } = entry;
  if (typeof name !== 'string') throw new ScopesFileError(`${at}: name must be a string`);
  // The name is printed only once it is known to be short and plain.
  if (!SCOPE_NAME.test(name)) throw new ScopesFileError(`${at}: name must match ${SCOPE_NAME.source}`);
  const where = `${at} "${name}"`;
  const unknown = Object.keys(entry).find((key) => !ENTRY_KEYS.has(key));
  if (unknown !== undefined) throw new ScopesFileError(`${where}: unknown key ${JSON.stringify(unknown.slice(0, 40))}`);
  if ((SCOPES as readonly string[]).includes(name)) throw new ScopesFileError(`${where}: is a built-in scope`);
  if (seen.has(name)) throw new ScopesFileError(`${where}: is declared twice`);
  if (typeof description !== 'string' || description.trim() === '' || [...description].length > MAX_DESCRIPTION_LENGTH || CONTROL.test(description)) {
    throw new ScopesFileError(`${where}: description must be 1 to ${MAX_DESCRIPTION_LENGTH} characters without control characters`);
  }
  seen.add(name);
  return { name, description: description.trim(), tokenTypes: parseTokenTypes(entry.token_types, where) };
}

/**
 * Parses the text of a scopes file, `{ "scopes": [ { "name", "description", "token_types"? } ] }`.
 * Refuses anything else: a built-in name, a duplicate, an unknown key or a bad value, each named.
 */
export function parseScopesFile(text: string): PlatformScope[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new ScopesFileError('not valid JSON');
  }
  if (!isObject(document) || !Array.isArray(document.scopes)) throw new ScopesFileError('the file must be a JSON object with a "scopes" array');
  const unknown = Object.keys(document).find((key) => key !== 'scopes');
  if (unknown !== undefined) throw new ScopesFileError(`unknown top-level key ${JSON.stringify(unknown.slice(0, 40))}`);
  if (document.scopes.length > MAX_PLATFORM_SCOPES) {
    throw new ScopesFileError(`${document.scopes.length} scopes declared; at most ${MAX_PLATFORM_SCOPES} are allowed`);
  }
  const seen = new Set<string>();
  return document.scopes.map((entry, index) => parseEntry(entry, index, seen));
}

/**
 * Reads and parses the scopes file at `path`. A device, a pipe or a /proc file reports no size (or
 * blocks): only a regular file is read, and never more than the limit and one byte.
 * @throws ScopesFileError saying what is wrong with the file.
 */
export function readScopesFile(path: string): PlatformScope[] {
  let bytes: Buffer;
  try {
    if (!statSync(path).isFile()) throw new ScopesFileError('not a regular file');
    bytes = readAtMost(path, MAX_FILE_BYTES + 1);
  } catch (error) {
    if (error instanceof ScopesFileError) throw error;
    throw new ScopesFileError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (bytes.length > MAX_FILE_BYTES) throw new ScopesFileError(`larger than ${MAX_FILE_BYTES} bytes`);
  return parseScopesFile(bytes.toString('utf8'));
}

/** The first `max` bytes of a file (all of it when shorter). */
function readAtMost(path: string, max: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(max);
    let length = 0;
    for (let read = -1; read !== 0 && length < max; length += read) read = readSync(fd, buffer, length, max - length, null);
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}
