import { STRICT_UTF8 } from './bytes.js';
import { isAudience, isCidr, isLabel, isScopeName } from './grammar.js';

/** A rate-limit caveat: at most `q` requests per `w` seconds. */
export interface RateLimit {
  readonly q: number;
  readonly w: number;
}

/** One caveat of the closed set of contract §14.5, as `{ type, value }`. */
export type Caveat =
  | { readonly type: 'iat' | 'exp' | 'nbf'; readonly value: number }
  | { readonly type: 'scopes' | 'aud' | 'cidrs'; readonly value: readonly string[] }
  | { readonly type: 'label'; readonly value: string }
  | { readonly type: 'rl'; readonly value: RateLimit };

export type CaveatType = Caveat['type'];

/** Epoch seconds up to 9999-12-31T23:59:59Z, so every time has an ISO 8601 form (contract §1). */
export const MAX_TIME = 253_402_300_799;

const isInt = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

const isList = (value: unknown, min: number, max: number, item: (v: string) => boolean): value is string[] =>
  Array.isArray(value) && value.length >= min && value.length <= max && value.every((v) => typeof v === 'string' && item(v));

/** Whether `value` is a valid value for a caveat of `type` (counts and each item's grammar). */
function holds(type: CaveatType, value: unknown): boolean {
  switch (type) {
    case 'iat':
    case 'exp':
    case 'nbf':
      return isInt(value, 0, MAX_TIME);
    case 'scopes':
      return isList(value, 0, 50, isScopeName);
    case 'aud':
      return isList(value, 1, 20, isAudience);
    case 'cidrs':
      return isList(value, 1, 20, isCidr);
    case 'label':
      return typeof value === 'string' && isLabel(value);
    case 'rl': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      const { q, w } = value as Record<string, unknown>;
      return Object.keys(value).length === 2 && isInt(q, 1, 1_000_000) && isInt(w, 1, 86_400);
    }
  }
}

const TYPES: ReadonlySet<string> = new Set<CaveatType>(['iat', 'exp', 'nbf', 'scopes', 'aud', 'cidrs', 'label', 'rl']);

/** A caveat from its type and value, or null when either is outside the closed set's grammar. */
export function caveatOf(type: string, value: unknown): Caveat | null {
  if (!TYPES.has(type) || !holds(type as CaveatType, value)) return null;
  return { type, value } as Caveat;
}

/**
 * The one JSON text of a caveat: no whitespace, members in a fixed order, numbers in plain
 * decimal, strings as `JSON.stringify` escapes them. The same function writes caveats and checks
 * them, so a caveat read back is exactly one a writer could have made.
 */
export function encodeCaveat(caveat: Caveat): string {
  switch (caveat.type) {
    // Integers of the grammar are below 2^53, which String() writes in plain decimal digits.
    case 'iat':
    case 'exp':
    case 'nbf':
      return `{"${caveat.type}":${String(caveat.value)}}`;
    case 'rl':
      return `{"rl":{"q":${String(caveat.value.q)},"w":${String(caveat.value.w)}}}`;
    default:
      return `{"${caveat.type}":${JSON.stringify(caveat.value)}}`;
  }
}

/**
 * The caveat in `bytes`, or null. Invalid UTF-8, a parse error, other than exactly one member, an
 * unknown key, a value outside the grammar, and any text that is not the caveat's one encoding
 * (whitespace, a duplicate key, `1e9`, `1.0`, `-0`, a leading zero, an escape where none is
 * needed) are refused. Bounded: a caveat is at most 512 bytes, checked before this is called.
 */
export function parseCaveat(bytes: Uint8Array): Caveat | null {
  let text: string;
  let json: unknown;
  try {
    text = STRICT_UTF8.decode(bytes);
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const keys = Object.keys(json);
  const [type] = keys;
  if (keys.length !== 1 || type === undefined) return null;
  const caveat = caveatOf(type, (json as Record<string, unknown>)[type]);
  return caveat !== null && encodeCaveat(caveat) === text ? caveat : null;
}
