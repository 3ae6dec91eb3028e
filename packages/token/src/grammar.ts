/*
 * The value grammar of the caveats (contract §14.5). Every check reads a bounded input: callers
 * check lengths first, and no pattern here has overlapping quantifiers.
 */

/** Scope names of contract §7 (the catalogue's own pattern). */
const SCOPE = /^[a-z][a-z0-9_-]{0,31}(?::[a-z][a-z0-9_-]{0,31}){1,2}$/;
export const isScopeName = (value: string): boolean => value.length <= 98 && SCOPE.test(value);

/**
 * C0, DEL and C1 controls, the line and paragraph separators and the bidirectional overrides
 * ("Trojan Source"): the characters rz-auth refuses in every label it shows.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** A lone surrogate has no UTF-8 form, so it could not round-trip through the token's bytes. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Whitespace and characters that display as nothing (zero-width spaces, joiners, the BOM...). */
const BLANK = /[\s\p{Default_Ignorable_Code_Point}]/gu;

/**
 * 1 to `max` code points, no control character, something that shows, no space at either end:
 * the rule for `label` values and for service names in `aud` (rz-auth trims a service's name).
 */
export function isLabel(value: string, max = 100): boolean {
  if (value.length === 0 || value.length > 2 * max) return false;
  if ([...value].length > max || CONTROL.test(value) || LONE_SURROGATE.test(value)) return false;
  return value.trim() === value && value.replace(BLANK, '') !== '';
}

/** rz-auth's own API as an audience (contract §14.5). */
export const RZ_AUTH_AUDIENCE = 'rz-auth';
export const isAudience = (value: string): boolean => value === RZ_AUTH_AUDIENCE || isLabel(value);

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const HEXTET = /^[0-9A-Fa-f]{1,4}$/;

/** Hextets of one side of an IPv6 address, an embedded IPv4 address counting for two; -1 if malformed. */
function hextets(side: string, lastMayBeIPv4: boolean): number {
  if (side === '') return 0;
  const parts = side.split(':');
  let count = 0;
  for (const [i, part] of parts.entries()) {
    if (HEXTET.test(part)) count += 1;
    else if (lastMayBeIPv4 && i === parts.length - 1 && IPV4.test(part)) count += 2;
    else return -1;
  }
  return count;
}

/** An IPv6 address in RFC 4291 section 2.2 text form, without a zone id. */
function isIPv6(text: string): boolean {
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const [head = '', tail] = halves;
  if (tail === undefined) return hextets(head, true) === 8;
  const left = hextets(head, false);
  const right = hextets(tail, true);
  return left >= 0 && right >= 0 && left + right <= 7;
}

/** `ffff:ffff:…/128` is 44 characters, an IPv4-mapped one 49; anything longer is not a network. */
const MAX_CIDR_LENGTH = 49;

/**
 * An IPv4 or IPv6 network, `address/prefix` (a bare address is one host), as rz-auth's
 * `allowed_cidrs` takes them; the prefix in plain decimal. Zone ids are refused.
 */
export function isCidr(text: string): boolean {
  if (text.length > MAX_CIDR_LENGTH) return false;
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const bits = IPV4.test(address) ? 32 : isIPv6(address) ? 128 : 0;
  if (bits === 0) return false;
  if (slash < 0) return true;
  const prefix = text.slice(slash + 1);
  return /^(?:0|[1-9][0-9]{0,2})$/.test(prefix) && Number(prefix) <= bits;
}
