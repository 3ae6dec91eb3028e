import type { Restrictions } from '@rz-auth/token';
import { usageError } from './errors.js';

/** The options that narrow a child, shared by `rz token derive` and `rz token attenuate` (contract §14.7). */
export const NARROWING = {
  // Taken as lists so that a repeated --ttl, --label or --rate is refused, not silently the last one.
  ttl: { type: 'string', multiple: true },
  scopes: { type: 'string', multiple: true },
  aud: { type: 'string', multiple: true },
  cidr: { type: 'string', multiple: true },
  label: { type: 'string', multiple: true },
  rate: { type: 'string', multiple: true },
} as const;

export interface NarrowingValues {
  ttl?: string[] | undefined;
  scopes?: string[] | undefined;
  aud?: string[] | undefined;
  cidr?: string[] | undefined;
  label?: string[] | undefined;
  rate?: string[] | undefined;
}

function once(flag: string, values: readonly string[] | undefined): string | undefined {
  if (values !== undefined && values.length > 1) throw usageError(`--${flag} is given once (attenuate the child again to add another)`);
  return values?.[0];
}

const UNIT_S: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };
/** Plain decimal only: no sign, fraction or exponent, so `1.5h` or `-5` is refused, not guessed at. */
const DURATION = /^([1-9][0-9]{0,8})([smhd]?)$/;

/** `90s`, `15m`, `2h`, `7d` or plain seconds, as seconds; null for anything else. */
export function durationSeconds(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (match === null) return null;
  return Number(match[1]) * (UNIT_S[match[2] || 's'] ?? 1);
}

/** `q/w`: at most q requests per window w (a duration). */
function rateOf(text: string): { q: number; w: number } {
  const match = /^([1-9][0-9]{0,6})\/([^/]+)$/.exec(text.trim());
  const w = match?.[2] === undefined ? null : durationSeconds(match[2]);
  if (match === null || w === null) throw usageError(`--rate is requests/window, like 60/60s or 1000/1h (got ${JSON.stringify(text)})`);
  return { q: Number(match[1]), w };
}

/** Repeated options of comma-separated items, as one list without duplicates; an empty item is a usage error. */
function listOf(flag: string, values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const items = values.flatMap((value) => value.split(',')).map((item) => item.trim());
  if (items.some((item) => item === '')) throw usageError(`--${flag} takes comma-separated names, none of them empty`);
  return [...new Set(items)];
}

/** The restrictions the options ask for; their grammar and bounds are the token package's to check. */
export function restrictionsOf(v: NarrowingValues): Restrictions {
  const ttlText = once('ttl', v.ttl);
  const label = once('label', v.label);
  const rate = once('rate', v.rate);
  const ttl = ttlText === undefined ? undefined : durationSeconds(ttlText);
  if (ttl === null) throw usageError(`--ttl is a duration such as 90s, 15m, 2h, 7d, or seconds (got ${JSON.stringify(ttlText)})`);
  const scopes = listOf('scopes', v.scopes);
  const aud = listOf('aud', v.aud);
  const cidrs = listOf('cidr', v.cidr);
  return {
    ...(ttl === undefined ? {} : { ttl }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(aud === undefined ? {} : { aud }),
    ...(cidrs === undefined ? {} : { cidrs }),
    ...(label === undefined ? {} : { label }),
    ...(rate === undefined ? {} : { rl: rateOf(rate) }),
  };
}

/**
 * What each option must be, by the name the token package gives in ERR_OPTION_INVALID: the
 * package checks the grammar of contract §14.5, and the user sees it in terms of the flags.
 */
export const RULE_OF: Readonly<Record<string, string>> = {
  ttl: '--ttl must be 1 s to 30 days (2592000 s)',
  scopes: '--scopes must be 0 to 50 scope names such as games:publish',
  aud: '--aud must be 1 to 20 service names (or rz-auth), each 1 to 100 printable characters',
  cidrs: '--cidr must be 1 to 20 IPv4 or IPv6 networks such as 203.0.113.0/24',
  label: '--label must be 1 to 100 printable characters, no control characters, no space at either end',
  rl: '--rate must be 1 to 1000000 requests per a window of 1 s to 24 h',
};
