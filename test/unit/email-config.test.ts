import { describe, expect, it } from 'vitest';
import { isAccountEmail, isPlainMailbox } from '../../src/account/user-service.js';
import { loadConfig } from '../../src/config.js';

const on = { SMTP_URL: 'smtp://smtp.example.com:587', MAIL_FROM: 'no-reply@example.com', PUBLIC_URL: 'https://auth.example.com' };

describe('EMAIL_VERIFICATION_REQUIRED, RESET_TOKEN_TTL_S, VERIFY_TOKEN_TTL_S', () => {
  it('default to off, 30 minutes and 2 days', () => {
    expect(loadConfig({}).accountEmail).toEqual({ verificationRequired: false, resetTtlMs: 1_800_000, verifyTtlMs: 172_800_000 });
  });

  it('refuse to start out of range, naming the variable', () => {
    for (const [name, value] of [['RESET_TOKEN_TTL_S', '299'], ['RESET_TOKEN_TTL_S', '86401'], ['VERIFY_TOKEN_TTL_S', '3599'], ['VERIFY_TOKEN_TTL_S', '604801'], ['EMAIL_VERIFICATION_REQUIRED', 'yes please']] as const) {
      expect(() => loadConfig({ ...on, [name]: value }), `${name}=${value}`).toThrow(name);
    }
    expect(loadConfig({ ...on, RESET_TOKEN_TTL_S: '300', VERIFY_TOKEN_TTL_S: '604800' }).accountEmail).toMatchObject({ resetTtlMs: 300_000, verifyTtlMs: 604_800_000 });
  });

  it('EMAIL_VERIFICATION_REQUIRED=true needs mail on: nobody could ever prove an address', () => {
    expect(() => loadConfig({ EMAIL_VERIFICATION_REQUIRED: 'true' })).toThrow(/EMAIL_VERIFICATION_REQUIRED.*SMTP_URL/);
    expect(loadConfig({ ...on, EMAIL_VERIFICATION_REQUIRED: 'true' }).accountEmail.verificationRequired).toBe(true);
  });
});

describe('the account-email rule', () => {
  it.each(['ada@example.com', 'a.b+tag@ex-ample.co.uk', "o'neil@example.ie", 'élodie@exemple.fr', 'δοκιμή@παράδειγμα.ελ'])('accepts the plain mailbox %j', (email) => {
    expect(isPlainMailbox(email)).toBe(true);
  });

  // Regression: the rule accepted these, and a mail library reads each as another recipient.
  it.each(['a,b@example.com', 'a<b@example.com', 'a<b@example.com>', '"a b"@example.com', 'a;b@example.com', 'a:b@example.com', 'a(x)@example.com', 'a\\b@example.com', 'a..b@example.com', '.a@example.com', 'a@[192.0.2.1]', `${'a'.repeat(65)}@example.com`])(
    'refuses %j, which a stored account may still log in with',
    (email) => {
      expect(isPlainMailbox(email)).toBe(false);
    },
  );

  it('still looks up addresses stored before the rule (they log in)', () => {
    expect(isAccountEmail('a,b@example.com')).toBe(true);
    expect(isAccountEmail('a<b@example.com')).toBe(true);
  });
});
