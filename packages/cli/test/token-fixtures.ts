import { chainHolds, derivationKey, readChild } from '@rz-auth/token';
import { expect } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { harness, START, type Harness } from './harness.js';

/** Parents as rz-auth issues them (prefix, 49 base62 characters with the house checksum). */
export const PARENT = generateToken('api');
export const OTHER_PARENT = generateToken('api');
/** The harness clock in epoch seconds: every child below is issued at this time. */
export const NOW_S = START / 1000;

/** Runs one command in a fresh harness; the caller cleans up. */
export async function rz(argv: string[], options: Parameters<typeof harness>[0] = {}): Promise<{ h: Harness; code: number }> {
  const h = harness(options);
  return { h, code: await h.run(...argv) };
}

/** Runs a command that must print a token: exit 0, the token alone on stdout, nothing on stderr. */
export async function printed(argv: string[], options: Parameters<typeof harness>[0] = {}): Promise<string> {
  const { h, code } = await rz(argv, options);
  try {
    expect({ code, stderr: h.stderr() }).toEqual({ code: 0, stderr: '' });
    expect(h.stdout()).toMatch(/^rzd_[A-Za-z0-9_-]{100,4092}\n$/);
    return h.stdout().trimEnd();
  } finally {
    h.cleanup();
  }
}

/** Whether `child` is well formed and its chain recomputes from `parent`'s derivation key. */
export function madeFrom(child: string, parent: string): boolean {
  const read = readChild(child);
  return read !== null && chainHolds(read, derivationKey(parent));
}

/** The refusal of a command: its exit code and message, with no token on either stream. */
export async function refused(argv: string[], options: Parameters<typeof harness>[0] = {}, secrets: string[] = [PARENT]): Promise<{ code: number; stderr: string }> {
  const { h, code } = await rz(argv, options);
  try {
    expect(h.stdout()).toBe('');
    for (const secret of secrets) expect(h.stderr()).not.toContain(secret);
    return { code, stderr: h.stderr() };
  } finally {
    h.cleanup();
  }
}
