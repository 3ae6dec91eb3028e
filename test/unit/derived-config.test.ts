import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const key = () => randomBytes(32).toString('base64');

describe('derived token configuration (contract §14.2)', () => {
  it('is off by default, with a 7-day maximum life', () => {
    const { derived } = loadConfig({});
    expect(derived.kek).toEqual({ current: null, old: null });
    expect(derived.maxTtlS).toBe(604_800);
  });

  it('takes DERIVE_KEK and DERIVE_KEK_OLD, and a maximum life up to 30 days', () => {
    const { derived } = loadConfig({ DERIVE_KEK: key(), DERIVE_KEK_OLD: key(), DERIVED_MAX_TTL_S: '2592000' });
    expect(derived.kek.current).not.toBeNull();
    expect(derived.kek.old).not.toBeNull();
    expect(derived.maxTtlS).toBe(2_592_000);
  });

  it.each([
    [{ DERIVED_MAX_TTL_S: '2592001' }, /DERIVED_MAX_TTL_S/],
    [{ DERIVED_MAX_TTL_S: '0' }, /DERIVED_MAX_TTL_S/],
    [{ DERIVE_KEK: 'c2hvcnQ=' }, /DERIVE_KEK must be 32 random bytes/],
    [{ DERIVE_KEK_OLD: key() }, /DERIVE_KEK_OLD is set without DERIVE_KEK/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
