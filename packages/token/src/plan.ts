import { checksumHolds, hex, randomUuidBytes, utf8, uuidBytes, uuidText } from './bytes.js';
import type { Caveat } from './caveats.js';
import { invalidOption, malformedParent, malformedToken, TokenError } from './errors.js';
import { caveatBytes, type Framing, MAX_CAVEATS, readChild, readFraming, writeChild } from './format.js';
import { type DeriveOptions, nowSeconds, type Restrictions, restrictionCaveats } from './options.js';
import { type CaveatSummary, summarize } from './rights.js';

/*
 * Everything deriving and attenuating do besides HMAC, shared by the Node entry and the WebCrypto
 * twin so the two cannot drift: only the HMAC calls differ between them.
 */

/** The messages of contract §14.3 and §14.4, HMAC'd with the parent's value as the key. */
export const DERIVE_MESSAGE = utf8('rz-derive-v1');
export const REF_MESSAGE = utf8('rz-derive-ref-v1');

/** API and app tokens (contract §3): children of service credentials are out of scope. */
const PARENT = /^rza?_[0-9A-Za-z]{49}$/;

/** The parent's value as the HMAC key, after its prefix and checksum are checked. */
export function parentKey(parent: string): Uint8Array {
  if (typeof parent !== 'string' || !PARENT.test(parent) || !checksumHolds(parent)) throw malformedParent();
  return utf8(parent);
}

export interface Plan {
  readonly childId: Uint8Array;
  /** Caveats to sign after the chain head (derive) or after the child's tag (attenuate). */
  readonly added: readonly Uint8Array[];
}

/** The child id and first caveats of a new child: `iat` = now, then the restrictions. */
export function planDerive(opts: DeriveOptions): Plan {
  if (typeof opts !== 'object' || opts === null || opts.ttl === undefined) throw invalidOption('ttl', 'is required');
  const now = nowSeconds(opts.now);
  const childId = opts.childId === undefined ? randomUuidBytes() : uuidBytes(opts.childId);
  if (childId === null) throw invalidOption('childId', 'must be a UUID');
  const caveats: Caveat[] = [{ type: 'iat', value: now }, ...restrictionCaveats(opts, now)];
  return { childId, added: caveats.map(caveatBytes) };
}

/**
 * The child being attenuated and the caveats to append to it. Only the child's framing is read:
 * appending needs no more, and a child whose caveats break the grammar stays refused by whoever
 * verifies it, however many caveats are appended.
 */
export function planAttenuate(token: string, opts: Restrictions): { readonly child: Framing; readonly added: readonly Uint8Array[] } {
  const child = readFraming(token);
  if (child === null) throw malformedToken();
  const added = restrictionCaveats(opts ?? {}, nowSeconds(opts?.now)).map(caveatBytes);
  if (added.length === 0) throw invalidOption('opts', 'must hold at least one restriction');
  return { child, added };
}

/** The finished token, or a thrown ERR_TOKEN_TOO_LARGE past 16 caveats or 4,096 characters. */
export function finish(parentRef: Uint8Array, childId: Uint8Array, raw: readonly Uint8Array[], tag: Uint8Array): string {
  const token = writeChild(parentRef, childId, raw, tag);
  if (token === null) throw new TokenError('ERR_TOKEN_TOO_LARGE', `A child holds at most ${MAX_CAVEATS} caveats and 4096 characters.`);
  return token;
}

/** What `inspect` returns: the caveats and what they allow by themselves. Nothing is verified. */
export interface Inspection extends CaveatSummary {
  /** 32 hex digits: the parent's reference, computed from its value. */
  readonly parentRef: string;
  /** In UUID text form: revoking it revokes every attenuation of the child. */
  readonly childId: string;
  readonly caveats: readonly Caveat[];
}

/** The inspection of a token's text; throws ERR_TOKEN_MALFORMED for anything that is not a well-formed child. */
export function inspectToken(token: string): Inspection {
  const child = readChild(token);
  if (child === null) throw malformedToken();
  return { parentRef: hex(child.parentRef), childId: uuidText(child.childId), caveats: child.caveats, ...summarize(child.caveats) };
}
