import { createHash, randomBytes, randomInt } from 'node:crypto';

/** RFC 8628 §6.1: consonants only (no vowels to spell words), no look-alikes; 20^8 ≈ 34.6 bits. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE = new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`);

/** 8 letters drawn uniformly (crypto.randomInt rejects biased draws). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** 256 bits from the CSPRNG, 43 base64url characters. */
export const newDeviceCode = (): string => randomBytes(32).toString('base64url');

/** What is stored of a device code: its SHA-256, hex. */
export const deviceCodeDigest = (code: string): string => createHash('sha256').update(code, 'utf8').digest('hex');

/** `WDJBMJHT` as shown: `WDJB-MJHT`. */
export const displayUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * A typed user code as stored, or null for anything that cannot be one: upper-cased, spaces and
 * dashes removed, then exactly 8 letters of the alphabet. Checked before any storage lookup.
 */
export function normalizeUserCode(input: string): string | null {
  if (input.length > 64) return null;
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  return USER_CODE.test(code) ? code : null;
}

/** The device name a request may carry: 1–64 characters after trimming, no control characters. */
export function cleanDeviceName(input: string | undefined): string | null | false {
  if (input === undefined) return null;
  const name = input.trim();
  if (name.length < 1 || [...name].length > 64 || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) return false;
  return name;
}

/** `"<client name> on <device name or 'unknown device'> (<YYYY-MM-DD>)"`, at most 100 characters. */
export function deviceTokenName(clientName: string, deviceName: string | null, now: number): string {
  const name = `${clientName} on ${deviceName ?? 'unknown device'} (${new Date(now).toISOString().slice(0, 10)})`;
  return [...name].slice(0, 100).join('');
}
