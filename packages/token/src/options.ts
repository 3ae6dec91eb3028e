import { utf8 } from './bytes.js';
import { type Caveat, caveatOf, encodeCaveat, MAX_TIME, type RateLimit } from './caveats.js';
import { invalidOption } from './errors.js';

/** Restrictions to add to a child; each becomes one caveat (contract §14.5). */
export interface Restrictions {
  /** Life from `now`: seconds, or `"90s"`, `"15m"`, `"12h"`, `"7d"`. Becomes an `exp` caveat. */
  readonly ttl?: number | string;
  /** Not valid before this time (epoch seconds). */
  readonly nbf?: number;
  /** Scopes to keep: the child gets the parent's scopes ∩ these (never more). */
  readonly scopes?: readonly string[];
  /** Services (by service credential name) or `"rz-auth"` that may accept the child. */
  readonly aud?: readonly string[];
  /** Networks the client must be in (IPv4 or IPv6 CIDRs). */
  readonly cidrs?: readonly string[];
  /** Readable by anyone holding the child: never personal data. */
  readonly label?: string;
  /** An extra rate limit for the child: `q` requests per `w` seconds. */
  readonly rl?: RateLimit;
  /** The current time in epoch seconds (default: the system clock). */
  readonly now?: number;
}

export interface DeriveOptions extends Restrictions {
  readonly ttl: number | string;
  /** The child's id in UUID text form (default: a random version 4 UUID). */
  readonly childId?: string;
}

/** The largest `DERIVED_MAX_TTL_S` a server accepts (contract §14.2); each server may allow less. */
export const MAX_TTL_S = 2_592_000;
/** Contract §14.4 (format.ts imports the grammar, so the bound is repeated rather than imported). */
const MAX_CAVEAT_BYTES = 512;
const UNIT_S: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };
const TTL = /^([1-9][0-9]{0,6})([smhd])$/;

/** `ttl` in seconds, or a thrown ERR_OPTION_INVALID. */
export function ttlSeconds(ttl: number | string): number {
  const match = typeof ttl === 'string' ? TTL.exec(ttl) : null;
  const seconds = typeof ttl === 'number' ? ttl : match ? Number(match[1]) * (UNIT_S[match[2] ?? 's'] ?? 1) : NaN;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_TTL_S) {
    throw invalidOption('ttl', `must be 1 s to ${MAX_TTL_S} s, as seconds or like "15m"`);
  }
  return seconds;
}

export function nowSeconds(now: number | undefined): number {
  const value = now ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(value) || value < 0 || value > MAX_TIME - MAX_TTL_S) throw invalidOption('now', 'must be integer epoch seconds');
  return value;
}

function checked(option: string, type: Caveat['type'], value: unknown, rule: string): Caveat {
  const caveat = caveatOf(type, value);
  if (caveat === null) throw invalidOption(option, rule);
  // §14.4 bounds each caveat to 512 bytes; a UTF-16 length over 170 may be over it in UTF-8.
  const text = encodeCaveat(caveat);
  if (text.length > 170 && utf8(text).length > MAX_CAVEAT_BYTES) throw invalidOption(option, `must be at most ${MAX_CAVEAT_BYTES} bytes as JSON`);
  return caveat;
}

/** The caveats for `opts`, in a fixed order, each checked against the grammar; throws naming the option. */
export function restrictionCaveats(opts: Restrictions, now: number): Caveat[] {
  const out: Caveat[] = [];
  if (opts.ttl !== undefined) out.push(checked('ttl', 'exp', now + ttlSeconds(opts.ttl), 'is out of range'));
  if (opts.nbf !== undefined) out.push(checked('nbf', 'nbf', opts.nbf, 'must be integer epoch seconds'));
  if (opts.scopes !== undefined) out.push(checked('scopes', 'scopes', opts.scopes, 'must be 0 to 50 scope names'));
  if (opts.aud !== undefined) out.push(checked('aud', 'aud', opts.aud, 'must be 1 to 20 service names or "rz-auth"'));
  if (opts.cidrs !== undefined) out.push(checked('cidrs', 'cidrs', opts.cidrs, 'must be 1 to 20 IPv4 or IPv6 networks'));
  if (opts.label !== undefined) out.push(checked('label', 'label', opts.label, 'must be 1 to 100 printable characters'));
  if (opts.rl !== undefined) out.push(checked('rl', 'rl', opts.rl, 'must be { q: 1 to 1000000, w: 1 to 86400 }'));
  return out;
}
