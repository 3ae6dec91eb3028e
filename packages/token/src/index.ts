import { createHmac, timingSafeEqual } from 'node:crypto';
import { hex } from './bytes.js';
import { chainHead, type Child } from './format.js';
import type { DeriveOptions, Restrictions } from './options.js';
import { DERIVE_MESSAGE, finish, parentKey, planAttenuate, planDerive, REF_MESSAGE } from './plan.js';

export type { Caveat, CaveatType, RateLimit } from './caveats.js';
export { TokenError, type TokenErrorCode } from './errors.js';
export { type Child, MAX_TOKEN_LENGTH, PREFIX, readChild } from './format.js';
export { MAX_TTL_S, type DeriveOptions, type Restrictions } from './options.js';
export { inspectToken as inspect, type Inspection } from './plan.js';
export { type CaveatSummary, effectiveRights, type EffectiveRights, IAT_LEEWAY_S, type ParentFacts, summarize } from './rights.js';

const hmac = (key: Uint8Array, message: Uint8Array): Uint8Array => createHmac('sha256', key).update(message).digest();

/**
 * The derivation key of a derivable parent, `HMAC-SHA256(UTF-8(P), "rz-derive-v1")` (contract
 * §14.3): what signs its children. Throws ERR_PARENT_MALFORMED for anything but an `rz_` or `rza_`
 * token with a valid checksum.
 */
export const derivationKey = (parent: string): Uint8Array => hmac(parentKey(parent), DERIVE_MESSAGE);

/** The parent's reference carried by its children: 32 hex digits of `HMAC-SHA256(UTF-8(P), "rz-derive-ref-v1")`. */
export const parentRef = (parent: string): string => hex(hmac(parentKey(parent), REF_MESSAGE).subarray(0, 16));

/** The HMAC chain from `tag` over `caveats` (each step keyed by the previous tag). */
function extend(tag: Uint8Array, caveats: readonly Uint8Array[]): Uint8Array {
  let t = tag;
  for (const caveat of caveats) t = hmac(t, caveat);
  return t;
}

/**
 * A child of `parent` (an `rz_` or `rza_` token), offline: `iat` now, `exp` after `ttl`, and a
 * caveat per restriction given. Whether the parent is derivable, and what it may do, is decided
 * by rz-auth when the child is used.
 */
export function derive(parent: string, opts: DeriveOptions): string {
  const key = parentKey(parent);
  const { childId, added } = planDerive(opts);
  const ref = hmac(key, REF_MESSAGE).subarray(0, 16);
  const tag = extend(hmac(hmac(key, DERIVE_MESSAGE), chainHead(ref, childId)), added);
  return finish(ref, childId, added, tag);
}

/** `child` with more restrictions appended; no secret needed. The child id stays. */
export function attenuate(child: string, opts: Restrictions): string {
  const { child: read, added } = planAttenuate(child, opts);
  return finish(read.parentRef, read.childId, [...read.raw, ...added], extend(read.tag, added));
}

/**
 * Whether a child's tag recomputes from its parent's derivation key. Call it on the result of
 * readChild (bounds and grammar first) once the parent is found by its reference. Constant-time.
 */
export function chainHolds(child: Child, key: Uint8Array): boolean {
  const tag = extend(hmac(key, chainHead(child.parentRef, child.childId)), child.raw);
  return timingSafeEqual(tag, child.tag);
}
