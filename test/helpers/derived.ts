import { createHmac, randomBytes } from 'node:crypto';
import { derivationKey, inspect, readChild } from '@rz-auth/token';
import { caveatBytes, chainHead, writeChild } from '../../packages/token/src/format.js';
import type { Caveat } from '../../packages/token/src/caveats.js';

/** A DERIVE_KEK value: 32 random bytes in base64. */
export const newKek = (): string => randomBytes(32).toString('base64');


const hmac = (key: Uint8Array, message: Uint8Array): Uint8Array => createHmac('sha256', key).update(message).digest();

/** A child with exactly these caveat bytes, signed with `key` (a parent's dk, or anything a forger has). */
export function signChild(parentRef: Uint8Array, childId: Uint8Array, raw: readonly Uint8Array[], key: Uint8Array): string {
  let tag = hmac(key, chainHead(parentRef, childId));
  for (const caveat of raw) tag = hmac(tag, caveat);
  const token = writeChild(parentRef, childId, raw, tag);
  if (token === null) throw new Error('out of bounds');
  return token;
}

/** `child` re-signed by its parent's value with its caveats rearranged by `edit` (what only the parent's holder could do). */
export function resign(parent: string, child: string, edit: (raw: Uint8Array[]) => Uint8Array[]): string {
  const read = readChild(child);
  if (!read) throw new Error('not a child');
  return signChild(read.parentRef, read.childId, edit([...read.raw]), derivationKey(parent));
}

/** The bytes of a caveat as the chain signs them. */
export const caveat = (c: Caveat): Uint8Array => caveatBytes(c);

/** `child` with its caveats rearranged by `edit` but the tag kept: what a thief of the child could try. */
export function tamper(child: string, edit: (raw: Uint8Array[]) => Uint8Array[]): string {
  const read = readChild(child);
  if (!read) throw new Error('not a child');
  const token = writeChild(read.parentRef, read.childId, edit([...read.raw]), read.tag);
  if (token === null) throw new Error('out of bounds');
  return token;
}

export { inspect };
