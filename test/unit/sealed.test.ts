import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/lib/env-vars.js';
import { NO_SEALING_KEYS, parseSealingKey, Sealer, UnsealError } from '../../src/lib/sealed.js';

const newKey = () => parseSealingKey(randomBytes(32).toString('base64'), 'KEY');

describe('secrets sealed at rest (AES-256-GCM under KEY_ENCRYPTION_KEY)', () => {
  const a = newKey();
  const b = newKey();

  it('seals to a value that holds neither the secret nor the key, and opens it again', () => {
    const sealer = new Sealer({ current: a, old: null });
    const sealed = sealer.seal('whsec_secret-material', 'webhook_endpoints.secret:1');
    expect(sealed).toMatch(/^sealed:v1:[\w-]{12}:[\w-]+:[\w-]+$/);
    expect(sealed).not.toContain('secret-material');
    expect(sealed).not.toContain(a.export().toString('base64url'));
    expect(sealer.open(sealed, 'webhook_endpoints.secret:1', 'x')).toBe('whsec_secret-material');
    // A fresh nonce each time: the same secret never seals to the same bytes.
    expect(sealer.seal('whsec_secret-material', 'webhook_endpoints.secret:1')).not.toBe(sealed);
  });

  it('a sealed value moved to another row, or altered, does not open', () => {
    const sealer = new Sealer({ current: a, old: null });
    const sealed = sealer.seal('secret', 'signing_keys.private_jwk:kid-1');
    expect(() => sealer.open(sealed, 'signing_keys.private_jwk:kid-2', 'signing key kid-2')).toThrow(UnsealError);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => sealer.open(tampered, 'signing_keys.private_jwk:kid-1', 'x')).toThrow(/altered or moved/);
  });

  it('without a key: values are kept as they are, and a sealed one is refused naming KEY_ENCRYPTION_KEY', () => {
    const plain = new Sealer(NO_SEALING_KEYS);
    expect(plain.seal('secret', 'c')).toBe('secret');
    expect(plain.stale('secret')).toBe(false);
    const sealed = new Sealer({ current: a, old: null }).seal('secret', 'c');
    expect(() => plain.open(sealed, 'c', 'signing key k')).toThrow(/signing key k is encrypted under a key that neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_OLD holds/);
    expect(new UnsealError('x')).toBeInstanceOf(ConfigError);
  });

  it('rotation: the old key still opens, and what it sealed (or what is plain) is stale under the new key', () => {
    const before = new Sealer({ current: a, old: null }).seal('secret', 'c');
    const rotating = new Sealer({ current: b, old: a });
    expect(rotating.open(before, 'c', 'x')).toBe('secret');
    expect(rotating.stale(before)).toBe(true);
    expect(rotating.stale('plain secret')).toBe(true);
    expect(rotating.stale(rotating.seal('secret', 'c'))).toBe(false);
    expect(() => new Sealer({ current: b, old: null }).open(before, 'c', 'x')).toThrow(UnsealError);
  });

  it.each([
    [{ KEY_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'KEY_ENCRYPTION_KEY must be 32 random bytes'],
    [{ KEY_ENCRYPTION_KEY: `${randomBytes(32).toString('base64')}!` }, 'KEY_ENCRYPTION_KEY must be 32 random bytes'],
    [{ KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'), KEY_ENCRYPTION_KEY_OLD: 'x' }, 'KEY_ENCRYPTION_KEY_OLD must be 32 random bytes'],
    [{ KEY_ENCRYPTION_KEY_OLD: randomBytes(32).toString('base64') }, 'KEY_ENCRYPTION_KEY_OLD is set without KEY_ENCRYPTION_KEY'],
  ])('configuration %j is refused naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('the configuration holds the keys, frozen; none by default', () => {
    expect(loadConfig({}).keyEncryption).toEqual({ current: null, old: null });
    const config = loadConfig({ KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect(config.keyEncryption.current?.symmetricKeySize).toBe(32);
    expect(Object.isFrozen(config.keyEncryption)).toBe(true);
  });
});
