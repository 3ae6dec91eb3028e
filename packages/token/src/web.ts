import { constantTimeEqual, hex } from './bytes.js';
import { chainHead, type Child } from './format.js';
import type { DeriveOptions, Restrictions } from './options.js';
import { DERIVE_MESSAGE, finish, parentKey, planAttenuate, planDerive, REF_MESSAGE } from './plan.js';

/*
 * The WebCrypto twin of the Node entry, for browsers and edge runtimes: the same functions, async,
 * on globalThis.crypto.subtle. Everything but the HMAC calls is the Node entry's code.
 */

export type { Caveat, CaveatType, RateLimit } from './caveats.js';
export { TokenError, type TokenErrorCode } from './errors.js';
export { type Child, MAX_TOKEN_LENGTH, PREFIX, readChild } from './format.js';
export { MAX_TTL_S, type DeriveOptions, type Restrictions } from './options.js';
export { inspectToken as inspect, type Inspection } from './plan.js';
export { type CaveatSummary, effectiveRights, type EffectiveRights, IAT_LEEWAY_S, type ParentFacts, summarize } from './rights.js';

async function hmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const { subtle } = globalThis.crypto;
  const handle = await subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', handle, new Uint8Array(message)));
}

/** See the Node entry's derivationKey. */
export const derivationKey = async (parent: string): Promise<Uint8Array> => hmac(parentKey(parent), DERIVE_MESSAGE);

/** See the Node entry's parentRef. */
export const parentRef = async (parent: string): Promise<string> => hex((await hmac(parentKey(parent), REF_MESSAGE)).subarray(0, 16));

async function extend(tag: Uint8Array, caveats: readonly Uint8Array[]): Promise<Uint8Array> {
  let t = tag;
  for (const caveat of caveats) t = await hmac(t, caveat);
  return t;
}

/** See the Node entry's derive: the same token for the same inputs. */
export async function derive(parent: string, opts: DeriveOptions): Promise<string> {
  const key = parentKey(parent);
  const { childId, added } = planDerive(opts);
  const ref = (await hmac(key, REF_MESSAGE)).subarray(0, 16);
  const tag = await extend(await hmac(await hmac(key, DERIVE_MESSAGE), chainHead(ref, childId)), added);
  return finish(ref, childId, added, tag);
}

/** See the Node entry's attenuate. */
export async function attenuate(child: string, opts: Restrictions): Promise<string> {
  const { child: read, added } = planAttenuate(child, opts);
  return finish(read.parentRef, read.childId, [...read.raw, ...added], await extend(read.tag, added));
}

/** See the Node entry's chainHolds. */
export async function chainHolds(child: Child, key: Uint8Array): Promise<boolean> {
  const tag = await extend(await hmac(key, chainHead(child.parentRef, child.childId)), child.raw);
  return constantTimeEqual(tag, child.tag);
}
