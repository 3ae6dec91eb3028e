import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { ConfigError, type Env, raw } from './env-vars.js';

/*
 * Secrets at rest (signing private keys, webhook secrets) sealed with AES-256-GCM under the
 * operator's KEY_ENCRYPTION_KEY. A sealed value is one string, so no column changes:
 *   sealed:v1:<key id>:<nonce, base64url>:<ciphertext and tag, base64url>
 * The key id (a digest of the key, never the key) says which key opens it, so a rotation can keep
 * the previous key for reading. The row's identity is the GCM additional data: a sealed value
 * copied into another row, or another column, does not open there.
 */

const PREFIX = 'sealed:v1:';
/** 96-bit random nonces (NIST SP 800-38D §8.2.2): far below 2^32 seals per key in any deployment. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The operator's keys: the one that seals, and one from before a rotation that still opens. */
export interface SealingKeys {
  readonly current: KeyObject | null;
  readonly old: KeyObject | null;
}

export const NO_SEALING_KEYS: SealingKeys = Object.freeze({ current: null, old: null });

/** A stored secret that no configured key opens: the service must not start on it. */
export class UnsealError extends ConfigError {}

/** A 32-byte key from its base64 form, as KEY_ENCRYPTION_KEY holds it; `name` is the variable. */
export function parseSealingKey(value: string, name: string): KeyObject {
  const bytes = Buffer.from(value, 'base64');
  // Buffer.from skips characters that are not base64: compare against the canonical encoding.
  if (bytes.length !== 32 || bytes.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    throw new ConfigError(`${name} must be 32 random bytes in base64 (openssl rand -base64 32)`);
  }
  return createSecretKey(bytes);
}

/**
 * `name` (KEY_ENCRYPTION_KEY by default, MFA_ENCRYPTION_KEY for second factors) and, during a
 * rotation, `<name>_OLD`.
 */
export function sealingKeysFrom(env: Env, name = 'KEY_ENCRYPTION_KEY'): SealingKeys {
  const current = raw(env, name);
  const old = raw(env, `${name}_OLD`);
  // Without a current key nothing would be sealed again: the old key would stay in use for ever.
  if (old !== undefined && current === undefined) throw new ConfigError(`${name}_OLD is set without ${name}, the key that replaces it`);
  return {
    current: current === undefined ? null : parseSealingKey(current, name),
    old: old === undefined ? null : parseSealingKey(old, `${name}_OLD`),
  };
}

/** True for a stored value that is sealed (under whichever key), false for a plain one. */
export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

const keyId = (key: KeyObject): string => createHash('sha256').update('rz-auth sealing key id\0').update(key.export()).digest('base64url').slice(0, 12);

/** Seals and opens secrets kept in the database (docs/deployment.md#secrets-at-rest). */
export class Sealer {
  private readonly current: { id: string; key: KeyObject } | null;
  private readonly byId = new Map<string, KeyObject>();

  /** `variable` names the keys in errors: KEY_ENCRYPTION_KEY, or MFA_ENCRYPTION_KEY for second factors. */
  constructor(
    keys: SealingKeys,
    private readonly variable = 'KEY_ENCRYPTION_KEY',
  ) {
    this.current = keys.current ? { id: keyId(keys.current), key: keys.current } : null;
    for (const key of [keys.old, keys.current]) if (key) this.byId.set(keyId(key), key);
  }

  /** `secret` sealed under the current key for the row `context`; as it is when no key is set. */
  seal(secret: string, context: string): string {
    if (!this.current) return secret;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce).setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.current.id}:${nonce.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  /**
   * The secret in a stored value: a sealed one opened with the key it names, a plain one (written
   * before a key was set) as it is. `what` names the row in the error.
   * @throws UnsealError when no configured key opens it.
   */
  open(stored: string, context: string, what: string): string {
    if (!isSealed(stored)) return stored;
    const [id = '', nonce = '', body = ''] = stored.slice(PREFIX.length).split(':');
    const key = this.byId.get(id);
    if (!key) throw new UnsealError(`${what} is encrypted under a key that neither ${this.variable} nor ${this.variable}_OLD holds`);
    const bytes = Buffer.from(body, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), { authTagLength: TAG_BYTES }).setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError(`${what} does not decrypt with the ${this.variable} its key id names: the value was altered or moved`);
    }
  }

  /** True when a stored value should be sealed again: plain while a key is set, or under an older key. */
  stale(stored: string): boolean {
    if (!this.current) return false;
    return !stored.startsWith(`${PREFIX}${this.current.id}:`);
  }
}
