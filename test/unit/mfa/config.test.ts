import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';

const key = () => randomBytes(32).toString('base64');

describe('second-factor configuration (contract §12.2)', () => {
  it('has the documented defaults: TOTP off without a key, passkeys off without a relying party', () => {
    const { mfa } = loadConfig({});
    expect(mfa).toEqual({
      encryption: { current: null, old: null },
      totpIssuer: 'rz-auth',
      webauthn: null,
      reauthMaxAgeS: 900,
      required: false,
      graceDays: 14,
      stepUpAllUsers: false,
    });
    expect(Object.isFrozen(mfa)).toBe(true);
  });

  it('takes the issuer, RP ID and origin from PUBLIC_URL unless set', () => {
    const { mfa } = loadConfig({ PUBLIC_URL: 'https://auth.example.com/' });
    expect(mfa.totpIssuer).toBe('auth.example.com');
    expect(mfa.webauthn).toEqual({ rpId: 'auth.example.com', rpName: 'rz-auth', origins: ['https://auth.example.com'] });
    const set = loadConfig({
      PUBLIC_URL: 'https://auth.example.com',
      TOTP_ISSUER: 'Example Games',
      WEBAUTHN_RP_ID: 'example.com',
      WEBAUTHN_RP_NAME: 'Example',
      WEBAUTHN_ORIGINS: 'https://auth.example.com,https://play.example.com',
    }).mfa;
    expect(set.totpIssuer).toBe('Example Games');
    expect(set.webauthn).toEqual({ rpId: 'example.com', rpName: 'Example', origins: ['https://auth.example.com', 'https://play.example.com'] });
  });

  it('reads the keys, the step-up window and the required-MFA settings', () => {
    const [current, old] = [key(), key()];
    const { mfa } = loadConfig({ MFA_ENCRYPTION_KEY: current, MFA_ENCRYPTION_KEY_OLD: old, REAUTH_MAX_AGE_S: '60', MFA_REQUIRED: 'true', MFA_GRACE_DAYS: '0', STEP_UP_ALL_USERS: 'yes' });
    expect(Buffer.from(mfa.encryption.current?.export() ?? '').toString('base64')).toBe(current);
    expect(Buffer.from(mfa.encryption.old?.export() ?? '').toString('base64')).toBe(old);
    expect(mfa).toMatchObject({ reauthMaxAgeS: 60, required: true, graceDays: 0, stepUpAllUsers: true });
  });

  it('allows http origins for localhost only', () => {
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).mfa.webauthn).toEqual({ rpId: 'localhost', rpName: 'rz-auth', origins: ['http://localhost:3000'] });
    expect(() => loadConfig({ PUBLIC_URL: 'http://auth.example.com' })).toThrow(/^PUBLIC_URL must be an https:\/\/ URL/);
    expect(() => loadConfig({ WEBAUTHN_RP_ID: 'auth.example.com', WEBAUTHN_ORIGINS: 'http://auth.example.com' })).toThrow(/^WEBAUTHN_ORIGINS: .*https/);
  });

  it.each([
    [{ MFA_ENCRYPTION_KEY: 'c2hvcnQ=' }, /^MFA_ENCRYPTION_KEY must be 32 random bytes/],
    [{ MFA_ENCRYPTION_KEY: `${key()}!` }, /^MFA_ENCRYPTION_KEY must be 32 random bytes/],
    [{ MFA_ENCRYPTION_KEY: key(), MFA_ENCRYPTION_KEY_OLD: 'x' }, /^MFA_ENCRYPTION_KEY_OLD must be 32 random bytes/],
    // Without a current key nothing would be sealed again, and the old key would stay for ever.
    [{ MFA_ENCRYPTION_KEY_OLD: key() }, /^MFA_ENCRYPTION_KEY_OLD is set without MFA_ENCRYPTION_KEY/],
    [{ REAUTH_MAX_AGE_S: '9' }, /^REAUTH_MAX_AGE_S/],
    [{ REAUTH_MAX_AGE_S: '86401' }, /^REAUTH_MAX_AGE_S/],
    [{ MFA_REQUIRED: 'maybe' }, /^MFA_REQUIRED/],
    [{ MFA_GRACE_DAYS: '366' }, /^MFA_GRACE_DAYS/],
    [{ MFA_GRACE_DAYS: '-1' }, /^MFA_GRACE_DAYS/],
    [{ STEP_UP_ALL_USERS: '2' }, /^STEP_UP_ALL_USERS/],
    [{ TOTP_ISSUER: 'a:b' }, /^TOTP_ISSUER/],
    [{ PUBLIC_URL: 'auth.example.com' }, /^PUBLIC_URL/],
    [{ WEBAUTHN_RP_ID: 'https://example.com' }, /^WEBAUTHN_RP_ID/],
    [{ WEBAUTHN_RP_ID: 'example.com:443', PUBLIC_URL: 'https://example.com' }, /^WEBAUTHN_RP_ID/],
    [{ WEBAUTHN_RP_ID: 'example.com' }, /^WEBAUTHN_RP_ID is set without WEBAUTHN_ORIGINS/],
    [{ WEBAUTHN_ORIGINS: 'https://example.com' }, /^WEBAUTHN_ORIGINS is set without/],
    [{ PUBLIC_URL: 'https://example.com', WEBAUTHN_ORIGINS: 'https://example.com/login' }, /^WEBAUTHN_ORIGINS must list exact origins/],
    // An origin outside the RP ID could never complete a ceremony (WebAuthn §5.1.4.1).
    [{ PUBLIC_URL: 'https://example.com', WEBAUTHN_ORIGINS: 'https://example.org' }, /^WEBAUTHN_ORIGINS: https:\/\/example.org is not within WEBAUTHN_RP_ID/],
    [{ PUBLIC_URL: 'https://example.com', WEBAUTHN_ORIGINS: 'https://badexample.com' }, /not within WEBAUTHN_RP_ID/],
    [{ PUBLIC_URL: 'https://example.com', WEBAUTHN_RP_NAME: 'x'.repeat(65) }, /^WEBAUTHN_RP_NAME/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
