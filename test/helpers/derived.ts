import { randomBytes } from 'node:crypto';

/** A DERIVE_KEK value: 32 random bytes in base64. */
export const newKek = (): string => randomBytes(32).toString('base64');
